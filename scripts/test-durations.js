#!/usr/bin/env node
// Each test file's duration from a vitest JSON report (.ci/run writes .ci/test-results.json), slowest
// first, as a Markdown table: `node scripts/test-durations.js [report] [--top N]`. The durations are
// wall-clock times of files running beside each other, so they say where a run waits, not what a
// file costs alone.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const args = process.argv.slice(2)
const topAt = args.indexOf('--top')
const top = topAt === -1 ? Infinity : Number(args.splice(topAt, 2)[1])
const report = JSON.parse(readFileSync(args[0] ?? '.ci/test-results.json', 'utf8'))

const files = report.testResults
  .map((file) => ({
    name: relative(process.cwd(), file.name),
    seconds: (file.endTime - file.startTime) / 1000,
    tests: file.assertionResults.length,
  }))
  .sort((a, b) => b.seconds - a.seconds)

const wall = (Math.max(...report.testResults.map((file) => file.endTime)) - report.startTime) / 1000
const sum = files.reduce((total, file) => total + file.seconds, 0)
console.log(`${files.length} files, ${report.numTotalTests} tests, ${wall.toFixed(0)} s from start to the last file's end (files' own durations add up to ${sum.toFixed(0)} s)\n`)
console.log('| file | tests | seconds |')
console.log('|---|---:|---:|')
for (const file of files.slice(0, top)) console.log(`| \`${file.name}\` | ${file.tests} | ${file.seconds.toFixed(1)} |`)
