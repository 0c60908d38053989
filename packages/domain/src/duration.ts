const DURATION = /^(\d+)\s*(ms|s|m|h|d)?$/
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
export type DurationUnit = keyof typeof UNIT_MS

/** "24h", "15m", "30s", "500ms", "90d" or a bare number in `defaultUnit` -> milliseconds. */
export function parseDuration(text: string, defaultUnit: DurationUnit = 's'): number | undefined {
  const match = DURATION.exec(text.trim())
  if (!match) return undefined
  const unit = (match[2] ?? defaultUnit) as DurationUnit
  return Number(match[1]) * UNIT_MS[unit]
}
