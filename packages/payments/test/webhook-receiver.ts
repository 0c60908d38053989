// A local HTTP endpoint that keeps every webhook it receives, raw, for parseWebhook.
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedWebhook {
  rawBody: Buffer
  headers: IncomingHttpHeaders
}

export async function startWebhookReceiver() {
  const received: ReceivedWebhook[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    received.push({ rawBody: Buffer.concat(chunks), headers: request.headers })
    response.writeHead(200).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/stripe`,
    received,
    /** The event types received, in order of arrival. */
    types: () => received.map((webhook) => (JSON.parse(webhook.rawBody.toString('utf8')) as { type: string }).type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
