/**
 * @commerce/domain as another team gets it: packed with npm, installed into an empty project
 * outside the workspace (its one dependency from the registry), imported from plain JavaScript
 * and type-checked from TypeScript (moduleResolution nodenext and node).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeCartTotals, formatMinorUnits, toMinorUnits } from '../src/index.js'

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url))
let project: string

const run = (command: string, args: string[]) => execFileSync(command, args, { cwd: project, encoding: 'utf8', stdio: 'pipe' })

/** A cart priced by the installed package (in USE) and by the workspace's source (expected). */
const CART = { currency: 'USD', lines: [{ id: 'a', unitPriceMinor: 1999, quantity: 3 }], coupons: [], taxRatePpm: 82_500, shippingMinor: 500 }

const USE = `
const body = JSON.stringify({ id: 'evt_1', event: 'order.paid', timestamp: '2026-11-23T00:00:00.000Z', data: { total: 42.5 } })
const signature = sign(body, 'a webhook secret')
const totals = computeCartTotals({ ...${JSON.stringify(CART)}, lines: [{ id: 'a', unitPriceMinor: toMinorUnits('19.99', 'USD'), quantity: 3 }] })
console.log(JSON.stringify({ valid: verify(body, 'a webhook secret', signature), forged: verify(body + ' ', 'a webhook secret', signature), total: formatMinorUnits(totals.total, 'USD'), subtotal: totals.subtotal, tax: totals.tax }))
`

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'commerce-domain-consumer-'))
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', project], { cwd: PACKAGE_DIR, encoding: 'utf8' }).trim()
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', join(project, packed.split('\n').at(-1)!)])
}, 120_000)

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true })
})

describe('the packed @commerce/domain', () => {
  it('holds only its build and package files, and depends on nothing but typebox (no database, no Fastify)', () => {
    const installed = join(project, 'node_modules/@commerce/domain')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    expect(Object.keys(manifest.dependencies)).toEqual(['typebox'])
    expect(readdirSync(installed)).toEqual(expect.arrayContaining(['CHANGELOG.md', 'README.md', 'dist', 'package.json']))
    expect(readdirSync(installed)).not.toContain('src')
    expect(readdirSync(join(installed, 'dist')).some((file) => file.endsWith('.test.js'))).toBe(false)
  })

  it('imports from plain JavaScript (ESM) and computes the same as in the workspace', () => {
    writeFileSync(join(project, 'use.mjs'), `import { computeCartTotals, formatMinorUnits, sign, toMinorUnits, verify } from '@commerce/domain'\n${USE}`)
    const here = computeCartTotals({ ...CART, lines: [{ id: 'a', unitPriceMinor: toMinorUnits('19.99', 'USD'), quantity: 3 }] })
    expect(JSON.parse(run('node', ['use.mjs']))).toEqual({
      valid: true,
      forged: false,
      total: formatMinorUnits(here.total, 'USD'),
      subtotal: 5997,
      tax: here.tax,
    })
  })

  // nodenext reads the exports map; node (node10), still many a project's setting, only `types`.
  it.each([
    ['nodenext', 'nodenext'],
    ['esnext', 'node'],
  ])('type-checks from TypeScript (module %s, moduleResolution %s) through its .d.ts files', { timeout: 120_000 }, (module, moduleResolution) => {
    writeFileSync(
      join(project, 'use.ts'),
      `import { computeCartTotals, formatMinorUnits, sign, toMinorUnits, verify, type CartTotals } from '@commerce/domain'\n${USE}\nconst typed: CartTotals = totals\nexport { typed }\n`,
    )
    writeFileSync(join(project, 'bad.ts'), `import { toMinorUnits } from '@commerce/domain'\nexport const wrong: string = toMinorUnits('1.00', 'USD')\n`)
    // One compiler run for both files (each run takes seconds): only the wrong use may fail.
    let output = ''
    try {
      run('node', [TSC, '--noEmit', '--strict', '--module', module, '--moduleResolution', moduleResolution, '--target', 'es2022', 'use.ts', 'bad.ts'])
    } catch (error) {
      output = String((error as { stdout?: string }).stdout)
    }
    expect(output).toMatch(/^bad\.ts\(2,14\): error TS2322: Type 'number' is not assignable to type 'string'/m)
    expect(output).not.toContain('use.ts')
  })
})
