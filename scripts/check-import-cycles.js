#!/usr/bin/env node
// Part of `pnpm lint`: no import circle among the TypeScript files of each folder given
// (`node scripts/check-import-cycles.js packages apps/worker`; a package's folder alone works too).
// Two files that import each other, directly or round a longer loop, cannot be understood apart:
// what both need belongs in a module of its own, or in the file that owns the concept.
// Every import counts, `import type` and `import()` too; only relative ones are followed (packages
// import each other by name, and turbo refuses a circle between packages).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
const folders = process.argv.slice(2)
if (folders.length === 0) {
  console.error('usage: node scripts/check-import-cycles.js <folder>... (e.g. packages, apps/api)')
  process.exit(2)
}

const SKIPPED = new Set(['node_modules', 'dist', '.data', '.turbo', 'coverage'])
const SOURCE = /\.(c|m)?tsx?$/

function sourceFiles(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : sourceFiles(path)
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The file a relative specifier names, as TypeScript resolves it under NodeNext ('./x.js' is ./x.ts). */
function resolveImport(from, specifier) {
  const target = resolve(dirname(from), specifier)
  const candidates = [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target.replace(/\.mjs$/, '.mts'), target.replace(/\.cjs$/, '.cts')]
  candidates.push(`${target}.ts`, `${target}.tsx`, join(target, 'index.ts'), join(target, 'index.tsx'))
  return candidates.find((candidate) => SOURCE.test(candidate) && existsSync(candidate) && statSync(candidate).isFile())
}

/** file -> the files it imports, for every source file under the folders. */
function importGraph(files) {
  const graph = new Map()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
      .map((specifier) => resolveImport(file, specifier))
      .filter((target) => target !== undefined)
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components with more than one file, or a file that imports itself (Tarjan). */
function circles(graph) {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  let next = 0
  const visit = (file) => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file), low.get(target)))
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)))
    }
    if (low.get(file) !== index.get(file)) return
    const component = []
    let member
    do {
      member = stack.pop()
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file).includes(file)) found.push(component)
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

/** One loop through the component's first file (breadth-first, so the shortest), for the message. */
function loopThrough(component, graph) {
  const members = new Set(component)
  const [start] = [...component].sort()
  const cameFrom = new Map([[start, null]])
  const queue = [start]
  while (queue.length) {
    const file = queue.shift()
    for (const target of graph.get(file)) {
      if (target === start) {
        const loop = [start]
        for (let at = file; at !== start; at = cameFrom.get(at)) loop.splice(1, 0, at)
        return [...loop, start]
      }
      if (members.has(target) && !cameFrom.has(target)) {
        cameFrom.set(target, file)
        queue.push(target)
      }
    }
  }
  return [start, start]
}

const files = folders.flatMap((folder) => sourceFiles(resolve(root, folder)))
const graph = importGraph(files)
const found = circles(graph)
const shown = (file) => relative(root, file)
for (const component of found) {
  console.error(`import circle: ${loopThrough(component, graph).map(shown).join(' -> ')}`)
  if (component.length > 2) console.error(`  (the circle's files: ${component.map(shown).sort().join(', ')})`)
}
if (found.length) process.exit(1)
console.log(`no import circle in ${files.length} TypeScript files under ${folders.join(', ')}`)
