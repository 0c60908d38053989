/**
 * Every task this worker runs, by the identifier jobs are added under
 * (`graphile_worker.add_job('<identifier>', payload)`).
 */
import type { TaskList } from 'graphile-worker'

// Empty for now: the event fan-out (`fanout-event`) and webhook delivery (`deliver-webhook`)
// tasks land here, one file each, as the outbox starts enqueueing jobs.
export const taskList: TaskList = {}
