#!/usr/bin/env node
// The API contract, openapi.json at the repository root, from the built app (no database):
//   node scripts/openapi.js write   writes it (pnpm openapi:write builds the API first)
//   node scripts/openapi.js check   fails, naming what differs, when it is not what the app builds
// The document's key order is stable (apps/api/src/openapi/components.ts), so the check never flaps.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { documentText, openApiDocument } from '../apps/api/dist/openapi/document.js'

const file = fileURLToPath(new URL('../openapi.json', import.meta.url))
const command = process.argv[2]
const built = await openApiDocument()

if (command === 'write') {
  writeFileSync(file, documentText(built))
  console.log('openapi.json written')
} else if (command === 'check') {
  const committed = JSON.parse(readFileSync(file, 'utf8'))
  const differences = differencesOf(committed, JSON.parse(documentText(built)))
  if (differences.length === 0 && readFileSync(file, 'utf8') === documentText(built)) {
    console.log('openapi.json is the contract the API builds')
  } else {
    console.error('openapi.json differs from the document the API builds (committed -> built):')
    for (const line of differences.slice(0, 40)) console.error(`  ${line}`)
    if (differences.length > 40) console.error(`  … and ${differences.length - 40} more`)
    if (differences.length === 0) console.error('  the same content, written otherwise (key order or spacing)')
    console.error('If the change is meant: run `pnpm openapi:write` and commit openapi.json, so the contract change shows in review.')
    process.exit(1)
  }
} else {
  console.error('usage: node scripts/openapi.js write|check')
  process.exit(2)
}

/** Where two JSON values differ, as JSON Pointers: `~ /paths/~1api~1v1~1carts/post/summary: "…" -> "…"`, `+ …` added, `- …` removed. */
function differencesOf(before, after, at = '') {
  const isObject = (value) => typeof value === 'object' && value !== null
  if (!isObject(before) || !isObject(after) || Array.isArray(before) !== Array.isArray(after)) {
    const [was, now] = [JSON.stringify(before), JSON.stringify(after)]
    if (was === now) return []
    // Long values from a little before where they start to differ.
    let from = 0
    while (was[from] === now[from]) from++
    const shown = (text) => (text.length > 60 ? `${from > 20 ? '…' : ''}${text.slice(Math.max(0, from - 20), from + 40)}…` : text)
    return [`~ ${at || '/'}: ${shown(was)} -> ${shown(now)}`]
  }
  const pointer = (key) => `${at}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return keys.flatMap((key) => {
    if (!(key in after)) return [`- ${pointer(key)}`]
    if (!(key in before)) return [`+ ${pointer(key)}`]
    return differencesOf(before[key], after[key], pointer(key))
  })
}
