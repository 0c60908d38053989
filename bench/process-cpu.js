/**
 * CPU time from /proc (Linux only): what a child process or a database's PostgreSQL backends
 * have used, which process.cpuUsage() cannot see. Used by cpu.js and the worker benchmarks.
 */
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100

/** CPU milliseconds a process has used (user + system). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000
}

/** CPU milliseconds used by the PostgreSQL backends now connected to `database`. */
export function databaseCpuMs(database) {
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (command.startsWith('postgres:') && command.includes(` ${database} `)) total += cpuMs(pid)
    } catch {
      // The process ended meanwhile.
    }
  }
  return total
}
