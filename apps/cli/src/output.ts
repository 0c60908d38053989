/** Human-readable output: a detail view of one record (tables come with the list commands). */

/** Aligned `label  value` lines; null and undefined values show as a dash. */
export function formatDetails(rows: ReadonlyArray<readonly [label: string, value: string | null | undefined]>): string {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value ?? '-'}`).join('\n')
}
