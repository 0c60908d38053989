#!/usr/bin/env node
// Build: the generated contract (scripts/generate.js), then dist/ as a package that stands on its
// own once published: esbuild bundles each entry (the webhook functions of @commerce/domain inside
// dist/webhooks.js), tsc writes the .d.ts files. dist/index.js imports nothing, so it runs in
// browsers as in Node; dist/webhooks.js imports node:crypto only.
import { execFileSync } from 'node:child_process'
import { copyFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const require = createRequire(import.meta.url)

execFileSync(process.execPath, [join(root, 'scripts/generate.js')], { stdio: 'inherit' })
rmSync(dist, { recursive: true, force: true })

const { metafile } = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['src/index.ts', 'src/webhooks.ts'],
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  external: ['node:crypto'],
  metafile: true,
  logLevel: 'warning',
})
const imports = Object.fromEntries(Object.entries(metafile.outputs).map(([file, output]) => [file, output.imports.map((entry) => entry.path)]))
if (imports['dist/index.js'].length > 0) throw new Error(`dist/index.js must import nothing (browsers): ${imports['dist/index.js']}`)
if (imports['dist/webhooks.js'].some((path) => path !== 'node:crypto')) throw new Error(`dist/webhooks.js imports ${imports['dist/webhooks.js']}`)

execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
// The webhook functions' types come from @commerce/domain, which is bundled, not a dependency: its
// signature.d.ts (self-contained) goes beside them and the re-export points there.
const domainTypes = join(dirname(require.resolve('@commerce/domain')), 'signature.d.ts')
if (/^\s*(import|export .* from)/m.test(readFileSync(domainTypes, 'utf8'))) throw new Error(`${domainTypes} imports other modules`)
copyFileSync(domainTypes, join(dist, 'signature.d.ts'))
const webhookTypes = join(dist, 'webhooks.d.ts')
writeFileSync(webhookTypes, readFileSync(webhookTypes, 'utf8').replaceAll("'@commerce/domain'", "'./signature.js'"))
for (const file of readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.d.ts'))) {
  if (/(from |import\()'@commerce\//.test(readFileSync(join(dist, file), 'utf8'))) throw new Error(`dist/${file} refers to a workspace package`)
}
console.log(`dist/: index.js ${metafile.outputs['dist/index.js'].bytes} bytes, webhooks.js ${metafile.outputs['dist/webhooks.js'].bytes} bytes`)
