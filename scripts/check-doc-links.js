#!/usr/bin/env node
// Part of `pnpm lint`: every relative link in README.md and docs/*.md must name a file or folder
// that exists and, with a #fragment into a Markdown file, one of its headings (GitHub's anchors).
// Links with a scheme (https:, mailto:) are not followed. `node scripts/check-doc-links.js [root]`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)))
const docs = join(root, 'docs')
const files = [
  join(root, 'README.md'),
  ...(existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => join(docs, name)) : []),
]

/** The lines of a Markdown file outside fenced code blocks, with their line numbers. */
function proseLines(text) {
  const lines = []
  let fence = null
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker) fence = marker[0]
    else if (fence !== null && marker?.[0] === fence) fence = null
    else if (fence === null) lines.push({ line, number: index + 1 })
  })
  return lines
}

/** GitHub's anchor for a heading: the rendered text, lower case, punctuation dropped, spaces as hyphens. */
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

const anchorsByFile = new Map()
/** The anchors of a Markdown file's headings, numbered like GitHub's when a heading repeats. */
function anchorsOf(file) {
  let anchors = anchorsByFile.get(file)
  if (anchors) return anchors
  anchors = new Set()
  for (const { line } of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`
    anchors.add(anchor)
  }
  anchorsByFile.set(file, anchors)
  return anchors
}

/** Why a link from `file` to `target` is broken, or null when it is not. */
function problemOf(file, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null
  const [pathPart, fragment] = target.split('#', 2)
  const path = decodeURIComponent(pathPart.split('?')[0])
  const destination = path === '' ? file : resolve(dirname(file), path)
  if (!existsSync(destination)) return `no such file: ${relative(root, destination)}`
  if (fragment === undefined || fragment === '') return null
  if (!statSync(destination).isFile() || !destination.endsWith('.md')) return null
  if (anchorsOf(destination).has(decodeURIComponent(fragment).toLowerCase())) return null
  return `no heading for #${fragment} in ${relative(root, destination)}`
}

const LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g
const problems = []
let links = 0
for (const file of files) {
  for (const { line, number } of proseLines(readFileSync(file, 'utf8'))) {
    // Code spans are text, not links.
    for (const match of line.replace(/`[^`]*`/g, '``').matchAll(LINK)) {
      const target = match[1] ?? match[2]
      links++
      const problem = problemOf(file, target)
      if (problem) problems.push(`${relative(root, file)}:${number}: ${target}: ${problem}`)
    }
  }
}

if (problems.length > 0) {
  console.error(`Broken documentation links (${problems.length}):\n${problems.join('\n')}`)
  process.exit(1)
}
console.log(`Documentation links: ${links} in ${files.length} files, none broken`)
