/**
 * oclif's command_not_found hook: a mistyped command is a usage error (exit 2) that names the
 * nearest command or topic, in scripts as at a terminal (oclif's plugin-not-found suggests only
 * through an interactive prompt, and then runs what it guessed).
 */
import { Errors, toConfiguredId, type Hook } from '@oclif/core'

/** Edits from `a` to `b`: a character inserted, deleted or replaced, or two neighbours swapped. */
function editDistance(a: string, b: string): number {
  // rows[i][j]: the distance between the first i characters of a and the first j of b.
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!
      const above = rows[i - 1]!
      row[j] = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1)
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The command or topic nearest to what was typed, if each of its words is near enough to be a typo
 * (a third of a word's letters wrong is no longer one). oclif joins every word typed into the id
 * (`products:lst:<id>`), so a name is compared with as many words as it has, and of the near names
 * the one that explains the most words wins (`products list` before the topic `products`).
 */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  const words = typed.split(':')
  let best: { name: string; words: number; distance: number } | undefined
  for (const name of names) {
    const parts = name.split(':')
    if (parts.length > words.length) continue
    const distances = parts.map((part, i) => editDistance(words[i]!, part))
    if (distances.some((distance, i) => distance > Math.max(1, Math.floor(parts[i]!.length / 3)))) continue
    const distance = distances.reduce((sum, each) => sum + each, 0)
    if (!best || parts.length > best.words || (parts.length === best.words && distance < best.distance)) {
      best = { name, words: parts.length, distance }
    }
  }
  return best?.name
}

const hook: Hook.CommandNotFound = async function ({ config, id }) {
  const names = [...config.commands.filter((command) => !command.hidden).map((command) => command.id), ...config.topics.filter((topic) => !topic.hidden).map((topic) => topic.name)]
  const nearest = nearestName(id, names)
  const typed = toConfiguredId(id, config)
  const suggestion = nearest ? ` Did you mean '${config.bin} ${toConfiguredId(nearest, config)}'?` : ''
  throw new Errors.CLIError(`'${typed}' is not a ${config.bin} command.${suggestion}\nRun '${config.bin} help' for the list of commands.`, { exit: 2 })
}

export default hook
