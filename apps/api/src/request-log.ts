/**
 * One log line per request, written once it has been answered: `request completed` with the
 * method, the route pattern (`/api/v1/products/:id`; absent for an unknown URL), the path without
 * its query string (which may hold `?access_token=`), `status_code` and `duration_ms` (the names
 * the worker's delivery lines use), beside the `request_id` every line of a request carries.
 * Fastify's "incoming request" line is dropped. The probes and the metrics scrape are logged at
 * debug, everything else at info. A WebSocket's line is written when it closes (logWebSocketClosed).
 *
 * Fastify calls this controller for every request (no hook of ours): below info it returns
 * before building anything, so a run at LOG_LEVEL=warn pays one level check per request.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { REQUEST_ID_LOG_FIELD, type ProcessLogger } from '@commerce/runtime/logger'
import { SYSTEM_PATHS } from './routes/system/routes.js'

const pathOf = (url: string) => {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

const fieldsOf = (request: FastifyRequest, statusCode: number, durationMs: number) => ({
  method: request.method,
  route: request.routeOptions.url,
  path: pathOf(request.url),
  status_code: statusCode,
  duration_ms: Math.round(durationMs * 100) / 100,
})

export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: REQUEST_ID_LOG_FIELD })
  }

  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const log = reply.log as ProcessLogger
    if (!error && !log.isLevelEnabled('info')) return
    const route = request.routeOptions.url
    const probe = route !== undefined && SYSTEM_PATHS.has(route)
    if (!error && probe && !log.isLevelEnabled('debug')) return
    const fields = fieldsOf(request, reply.statusCode, reply.elapsedTime)
    if (error) log.error({ ...fields, err: error }, 'request errored')
    else if (probe) log.debug(fields, 'request completed')
    else log.info(fields, 'request completed')
  }
}

/**
 * A WebSocket's request, whose answer (101) Fastify never sees finish: its line is written when
 * the connection closes, with how long it was open and the close code.
 */
export function logWebSocketClosed(request: FastifyRequest, openedAt: number, closeCode: number) {
  request.log.info({ ...fieldsOf(request, 101, performance.now() - openedAt), close_code: closeCode }, 'request completed')
}
