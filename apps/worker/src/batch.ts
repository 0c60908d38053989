/**
 * Many concurrent jobs' statements as one: calls made in the same turn of the event loop (a
 * local-queue batch of jobs starts together) are collected and run with one query. Each caller
 * still waits for its own result, so a job completes only after its write committed.
 */
export function batched<I, O>(run: (inputs: I[]) => Promise<O[]>, maxSize = 100): (input: I) => Promise<O> {
  let pending: { input: I; resolve: (output: O) => void; reject: (error: unknown) => void }[] = []

  function flush() {
    const batch = pending
    pending = []
    // Already taken by a flush at maxSize.
    if (batch.length === 0) return
    run(batch.map((entry) => entry.input)).then(
      (outputs) => batch.forEach((entry, index) => entry.resolve(outputs[index]!)),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
    )
  }

  return (input) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ input, resolve, reject })
      if (pending.length === 1) setImmediate(flush)
      else if (pending.length >= maxSize) flush()
    })
}
