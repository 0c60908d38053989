import { defineConfig } from 'vite'

// Relative asset paths: the built folder works wherever it is served (/admin/ on the API, or any
// static host), and routes live in the URL's fragment, so no server needs a rewrite rule.
export default defineConfig({
  base: './',
  // `pnpm --filter @commerce/admin dev`: the page on Vite's server, the API (and its WebSocket and
  // files) on the service started by `pnpm start`, as one origin.
  server: {
    proxy: {
      '/api': { target: 'http://localhost:3000', ws: true },
      '/files': 'http://localhost:3000',
    },
  },
  esbuild: { jsx: 'automatic' },
  build: {
    target: 'es2022',
    // No inline script or style: the page's Content-Security-Policy allows neither.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    rollupOptions: {
      onwarn(warning, warn) {
        // React libraries mark their modules "use client" (for server components); a page has none.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return
        warn(warning)
      },
    },
  },
})
