// After `vite build`: a Brotli and a gzip copy beside each asset, made once here, so that the API
// sends the smallest form a browser accepts without compressing anything per request
// (@fastify/static's preCompressed; a static host or CDN takes the same files).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const assets = fileURLToPath(new URL('../dist/assets/', import.meta.url))
for (const name of readdirSync(assets).filter((file) => /\.(js|css|svg)$/.test(file))) {
  const bytes = readFileSync(join(assets, name))
  writeFileSync(join(assets, `${name}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
  writeFileSync(join(assets, `${name}.gz`), gzipSync(bytes, { level: 9 }))
}
