/**
 * `?fields=` on every read of /api/v1 that answers a resource or a list (../field-selection.ts),
 * set up as each route is registered: its querystring gains `fields` (validated and documented
 * like any parameter, its description naming what it takes), and its handler is wrapped. A
 * request without `fields` goes straight to the route's own handler and serializer; one with it is
 * checked before the handler runs and its answer cut down and serialized by the route's schema
 * with nothing required in the cut objects (compiled once per route, on the first such request).
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { errorResponses } from '../errors.js'
import { FIELDS_MAX_LENGTH, selectableOf, type Selectable } from '../field-selection.js'

type Schema = Record<string, unknown>

const JSON_TYPE = 'application/json; charset=utf-8'
const READ_METHODS = new Set(['GET', 'HEAD'])

/** The parameter's text in the OpenAPI document, shared by every operation (components.parameters.fields). */
const FIELDS_PARAMETER_DESCRIPTION =
  'Answer with only these fields of the resource (of each item, in a list), comma-separated: `title,price`. Its ' +
  '`id` always comes along. A dot selects inside an embedded object or list: `variants.sku` answers each variant ' +
  'with its `id` and `sku`; `variants` alone answers them whole. An unknown name is a 400 validation_error naming ' +
  'it and listing the known ones. A list keeps its `meta` (and cursor) whole.'

function fieldsParameter({ names, list }: Selectable): Schema {
  const of = list === undefined ? 'the answer' : `each of \`${list}\``
  return { type: 'string', maxLength: FIELDS_MAX_LENGTH, description: `Only these fields of ${of}, comma-separated, nested with dots: ${names.join(', ')}.` }
}

/** The route's querystring with `fields` added: a new schema, as the querystring may be shared with other routes. */
function withFields(querystring: Schema | undefined, selectable: Selectable): Schema {
  const fields = { type: 'object', properties: { fields: fieldsParameter(selectable) } }
  if (querystring === undefined) return fields
  if (Array.isArray(querystring.allOf)) return { ...querystring, allOf: [...querystring.allOf, fields] }
  if (querystring.type === 'object') return { ...querystring, properties: { ...(querystring.properties as Schema), ...fields.properties } }
  throw new Error('A querystring schema that is neither an object nor an intersection of objects cannot take `fields`')
}

/**
 * Every operation's `fields` as a reference to one shared parameter, components.parameters.fields,
 * keeping the operation's own description (what its resource offers), as OpenAPI 3.1 allows.
 */
export function shareFieldsParameter(document: Schema): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, { parameters?: Schema[] }>>
  let schema: Schema | undefined
  for (const operation of Object.values(paths).flatMap((item) => Object.values(item))) {
    operation.parameters = operation.parameters?.map((parameter) => {
      if (parameter.in !== 'query' || parameter.name !== 'fields') return parameter
      const { description, ...rest } = parameter.schema as Schema
      schema ??= rest
      return { $ref: '#/components/parameters/fields', description: parameter.description ?? description }
    })
  }
  if (!schema) return
  const components = (document.components ??= {}) as Schema
  components.parameters = {
    ...(components.parameters as Schema | undefined),
    fields: { in: 'query', name: 'fields', required: false, description: FIELDS_PARAMETER_DESCRIPTION, schema },
  }
}

export default fp(
  async function fieldSelectionPlugin(app: FastifyInstance) {
    app.addHook('onRoute', (route: RouteOptions) => {
      if (typeof route.method !== 'string' || !READ_METHODS.has(route.method) || !route.url.startsWith('/api/v1/')) return
      const answer = (route.schema?.response as Record<string, Schema> | undefined)?.[200]
      const selectable = answer && selectableOf(answer)
      if (!selectable) return
      // A new schema object: Fastify's HEAD copy of a GET route shares the GET's.
      // A read that took no input can now be refused (an unknown name): it answers 400 as well.
      route.schema = {
        ...route.schema,
        querystring: withFields(route.schema!.querystring as Schema | undefined, selectable),
        response: { ...errorResponses(400), ...(route.schema!.response as object) },
      }
      const handler = route.handler
      route.handler = function (request, reply) {
        const fields = (request.query as { fields?: string }).fields
        if (fields === undefined) return handler.call(this, request, reply)
        const selection = selectable.parse(fields)
        return Promise.resolve(handler.call(this, request, reply)).then((answer) => {
          // Serialized here, so the reply keeps its own serializer for anything sent after (an error from a later hook).
          const serialize = reply.compileSerializationSchema(selectable.schema, '200')
          reply.type(JSON_TYPE)
          return serialize(selectable.select(answer, selection) as Schema)
        })
      }
    })
  },
  { name: 'field-selection' },
)
