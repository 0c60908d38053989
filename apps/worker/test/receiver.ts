/** A real HTTP receiver on 127.0.0.1 for delivery tests: records every request, answers as told. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/** How to answer the n-th request (0-based) to a path; return nothing to leave it hanging. */
export type Answer = (response: ServerResponse, n: number) => void

export interface Receiver {
  url(path: string): string
  received(path?: string): Received[]
  answer(path: string, answer: Answer): void
  close(): Promise<void>
}

export const ok: Answer = (response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks')

export async function startReceiver(): Promise<Receiver> {
  const log: Received[] = []
  const answers = new Map<string, Answer>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? '/'
      const n = log.filter((entry) => entry.path === path).length
      log.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() })
      ;(answers.get(path) ?? ok)(response, n)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received: (path) => (path === undefined ? [...log] : log.filter((entry) => entry.path === path)),
    answer: (path, answer) => void answers.set(path, answer),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
