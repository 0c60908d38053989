/** buildApp(config): the whole HTTP application, used by main.ts and by the tests alike. */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { randomUUID } from 'node:crypto'
import { createDb } from '@commerce/db'
import { logDestination, logOptions, type LogDestination, type LogLevel } from '@commerce/runtime/logger'
import { ACCESS, ADMIN_ACCESS, CORS_PREFLIGHT_ACCESS, FILES_ACCESS, PUBLIC } from './access.js'
import type { Config } from './config.js'
import { ApiError } from './errors.js'
import { createIdempotency } from './idempotency.js'
import type { PaymentProvider } from '@commerce/domain'
import accessPlugin, { guardOf } from './plugins/access.js'
import authPlugin from './plugins/auth.js'
import corsPlugin from './plugins/cors.js'
import databasePlugin from './plugins/database.js'
import pricingRulesPlugin from './plugins/pricing-rules.js'
import translatedLocalesPlugin from './plugins/translated-locales.js'
import filesPlugin from './plugins/files.js'
import adminPlugin from './plugins/admin.js'
import errorsPlugin, { sendClientError, sendError, sendExpectationFailed, sendFrameworkError } from './plugins/errors.js'
import fieldSelectionPlugin from './plugins/field-selection.js'
import listCursorPlugin from './plugins/list-cursor.js'
import metricsPlugin from './plugins/metrics.js'
import openapiPlugin from './plugins/openapi.js'
import rateLimitPlugin from './plugins/rate-limit.js'
import securityHeadersPlugin from './plugins/security-headers.js'
import websocketPlugin from './plugins/websocket.js'
import { RequestLog } from './request-log.js'
import { jsonBodyParser, parseQueryString, withWellFormedText } from './request-text.js'
import { registerRoutes } from './routes/index.js'

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default
const BODY_LIMIT = 1024 * 1024
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/

/** WebSocket clients may send their token as `?access_token=`: it never reaches the logs. */
const withoutAccessToken = (url: string) => url.replace(/([?&]access_token=)[^&#]*/gi, '$1[redacted]')
const LOG_SERIALIZERS = {
  // Fastify's request serializer, with the URL cleaned.
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: withoutAccessToken(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }),
  // @fastify/websocket logs the URL of an upgrade to a route without a WebSocket handler as `path`.
  path: (path: unknown) => (typeof path === 'string' ? withoutAccessToken(path) : path),
}

/** Bodies are validated strictly (no coercion); query strings and paths are text, so coerced. */
function createValidators() {
  const common = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false } as const
  const body = new Ajv({ ...common, coerceTypes: false })
  const text = new Ajv({ ...common, coerceTypes: 'array' })
  addFormats(body)
  addFormats(text)
  return { body, text }
}

export interface BuildOptions {
  /**
   * Pino logger options over the shared shape (@commerce/runtime/logger) and ours (redaction,
   * serializers), e.g. a `stream` to capture the lines; false silences logging.
   */
  logger?: false | { level?: LogLevel; stream?: LogDestination }
  /** Where charges and refunds go, instead of config.paymentProvider (tests). */
  paymentProvider?: PaymentProvider
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const shared = logOptions('api', config.logLevel)
  const app = Fastify({
    logger: options.logger !== false && {
      ...shared,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["sec-websocket-protocol"]', '*.password', '*.secret', '*.token'],
        censor: '[redacted]',
      },
      serializers: { ...shared.serializers, ...LOG_SERIALIZERS },
      ...options.logger,
      stream: options.logger?.stream ?? logDestination(),
    },
    // Without a logger Fastify's own controller calls no-op methods (ours asks pino for its level).
    ...(options.logger !== false && { logController: new RequestLog() }),
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID()
    },
    ajv: { customOptions: { strict: false } },
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQueryString },
    // While closing, a request that arrives on an open keep-alive connection is still served (with
    // Connection: close) instead of Fastify's own 503 body: nothing sent to this instance is lost.
    return503OnClosing: false,
    // Malformed percent-encoding and over-long path parameters, refused by the router itself.
    frameworkErrors: sendFrameworkError,
    // Requests Node's HTTP parser refuses (a URL or headers over 16 KiB, bad syntax, too slow).
    clientErrorHandler: sendClientError,
    // A request without Host reaches the onRequest hook below, to be refused in our error body.
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const validators = createValidators()
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = (httpPart === 'body' ? validators.body : validators.text).compile(schema)
    return httpPart === 'headers' ? validate : withWellFormedText(validate)
  })
  // JSON only, in UTF-8: Fastify's built-in text/plain parser would let text reach the validators.
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser(app.getDefaultJsonParser('error', 'error')))
  // Hooks on every request are callback-style: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    // RFC 9112 §3.2; Node's own refusal of it had no body.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      done(new ApiError('validation_error', 'An HTTP/1.1 request needs a Host header'))
      return
    }
    done()
  })
  app.server.on('checkExpectation', sendExpectationFailed)

  if (!config.databaseUrl) throw new Error('buildApp needs config.databaseUrl')
  const pool = {
    url: config.databaseUrl,
    poolMax: config.databasePoolMax,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    transactionPooler: config.databasePgbouncer,
  }
  const main = createDb({ ...pool, applicationName: 'commerce-api' })
  const catalog = createDb({ ...pool, applicationName: 'commerce-api-catalog', genericPlans: true })
  // LISTEN needs a session: behind a transaction pooler it goes to PostgreSQL directly.
  const listen = config.databaseDirectUrl ? createDb({ url: config.databaseDirectUrl, poolMax: 1, connectTimeoutMs: config.databaseConnectTimeoutMs, applicationName: 'commerce-api-listen' }) : main

  await app.register(errorsPlugin)
  // Its onRequest hook first, so that a request refused by a later hook (401, 429) still carries
  // the security headers.
  await app.register(securityHeadersPlugin)
  // Before any route, so that an upgrade request to any of them is handled.
  await app.register(websocketPlugin)
  // Before any route, the reference page's too: each route gets its guard as it is registered.
  await app.register(accessPlugin, {
    table: {
      ...ACCESS,
      ...(config.corsOrigins ? CORS_PREFLIGHT_ACCESS : {}),
      ...(config.storage.root ? FILES_ACCESS : {}),
      ...(config.adminDir ? ADMIN_ACCESS : {}),
    },
  })
  // Before the auth and rate-limit hooks, so that a refusal answered to an allowed origin carries
  // the CORS headers its page needs to read the error; after the access plugin, which guards the
  // preflight route it adds.
  await app.register(corsPlugin, { origins: config.corsOrigins })
  await app.register(databasePlugin, { main, catalog, listen })
  await app.register(translatedLocalesPlugin)
  await app.register(pricingRulesPlugin)
  await app.register(metricsPlugin)
  await app.register(openapiPlugin)
  // Before any route: each read gets `fields` as it is registered.
  await app.register(fieldSelectionPlugin)
  // Before any route: each list refuses `page` with `after`.
  await app.register(listCursorPlugin)
  await app.register(authPlugin, { jwtSecret: config.jwtSecret, jwtExpiresInSeconds: config.jwtExpiresInSeconds })
  await app.register(rateLimitPlugin, {
    max: config.rateLimitMax,
    apiKeyMax: config.rateLimitApiKeyMax,
    windowMs: config.rateLimitWindowMs,
    redisUrl: config.redisUrl,
  })

  // Uploaded files, when they are on this instance's disk.
  await app.register(filesPlugin, { storage: config.storage })
  // The admin dashboard, when it is built.
  if (config.adminDir) {
    await app.register(adminPlugin, { root: config.adminDir, otherOrigins: [new URL(config.storage.url('x')).origin, new URL(config.publicUrl).origin] })
  }

  app.decorate('paymentProvider', options.paymentProvider ?? config.paymentProvider)
  app.decorate('idempotency', createIdempotency(app.db))
  await registerRoutes(app, config)

  // Unknown routes are rate limited too (a global hook), so probing URLs costs the prober; a bad
  // credential is refused there as on any public route.
  app.setNotFoundHandler({ preHandler: guardOf(PUBLIC) }, (request, reply) => {
    const path = request.url.split('?')[0]
    return sendError(reply, request, new ApiError('not_found', `No route ${request.method} ${path}`))
  })
  return app
}
