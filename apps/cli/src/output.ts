/** Human-readable output: a detail view of one record, or a table of many. */

/** Aligned `label  value` lines; null and undefined values show as a dash. */
export function formatDetails(rows: ReadonlyArray<readonly [label: string, value: string | null | undefined]>): string {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value ?? '-'}`).join('\n')
}

/** A table with a header row; columns as wide as their widest cell, null and undefined as a dash. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | null | undefined>>): string {
  const cells = [headers, ...rows.map((row) => row.map((value) => value ?? '-'))]
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  return cells.map((row) => row.map((value, column) => value.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
}
