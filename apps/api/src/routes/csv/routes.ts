/**
 * CSV exports and imports (docs/csv.md). A request needs the scope of the resource it is about:
 * `<resource>:read` to export and download, `<resource>:write` to import; lists show only those
 * resources, and an export or import of another resource is 404 as if it did not exist.
 */
import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import {
  CreateExport,
  CreateImportQuery,
  EXPORT_FILTERS,
  EXPORT_RESOURCES,
  Export,
  ExportList,
  hasScope,
  IdParams,
  Import,
  IMPORT_RESOURCES,
  ImportFileForm,
  ImportList,
  ImportRowList,
  ImportRowsQuery,
  PaginationQuery,
} from '@commerce/domain'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden, invalidField } from '../../errors.js'
import { originOf } from '../../origin.js'
import { createCsvService } from './service.js'

const deleted = { type: 'null', description: 'Deleted' } as const
/** The content types a CSV file may be sent as, as the whole body. */
const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain']

/** The resources among `all` whose `<resource>:<action>` scope the caller holds; 403 for none. */
function allowed<R extends string>(request: FastifyRequest, all: readonly R[], action: 'read' | 'write'): R[] {
  const scopes = request.principal!.scopes
  const resources = all.filter((resource) => hasScope(scopes, `${resource}:${action}`))
  if (resources.length === 0) throw forbidden(`Needs the scope ${all.map((resource) => `${resource}:${action}`).join(', ')} or one of them`)
  return resources
}

function requireScope(request: FastifyRequest, resource: string, action: 'read' | 'write') {
  if (!hasScope(request.principal!.scopes, `${resource}:${action}`)) throw forbidden(`Needs the scope ${resource}:${action}`)
}

export const exportRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const csv = createCsvService(app.db, config.storage, config.publicUrl)
  const readable = (request: FastifyRequest) => allowed(request, EXPORT_RESOURCES, 'read')

  app.post(
    '/',
    {
      schema: {
        operationId: 'createExport',
        tags: ['exports'],
        summary: 'Export products, customers or orders as CSV, in the background',
        description:
          'Answers at once with the export `pending`; the worker writes the file (UTF-8 with a byte order mark, one row per variant, ' +
          'customer or order line: docs/csv.md) and sets it `completed` with a `download_url`, or `failed` with an `error`.',
        body: CreateExport,
        response: { 202: Export, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { resource, filters = {} } = request.body
      requireScope(request, resource, 'read')
      const [wrong] = Value.Errors(EXPORT_FILTERS[resource], filters)
      if (wrong) {
        const field = ['filters', ...wrong.instancePath.split('/').filter(Boolean), ...((wrong.params as { additionalProperties?: string[] }).additionalProperties ?? [])].join('.')
        const unknown = wrong.keyword === 'boolean' || wrong.keyword === 'additionalProperties'
        const filterNames = Object.keys(EXPORT_FILTERS[resource].properties).join(', ')
        throw invalidField(field, unknown ? `Field '${field}' is not a filter of ${resource} (${filterNames})` : `Field '${field}' ${wrong.message}`)
      }
      return reply.code(202).send(await csv.createExport(request.body, originOf(request).actor))
    },
  )

  app.get(
    '/',
    {
      schema: {
        operationId: 'listExports',
        tags: ['exports'],
        summary: 'List exports, newest first',
        description: 'Only exports of resources the caller may read.',
        querystring: PaginationQuery,
        response: { 200: ExportList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => csv.listExports(readable(request), request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getExport',
        tags: ['exports'],
        summary: 'An export: its status, and once completed its size and download_url',
        params: IdParams,
        response: { 200: Export, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => csv.getExport(request.params.id, readable(request)),
  )

  app.get(
    '/:id/file',
    {
      schema: {
        operationId: 'downloadExport',
        tags: ['exports'],
        summary: "Download a completed export's CSV file",
        description:
          'With disk storage the answer is the file (text/csv, as an attachment); with S3 storage a 302 to a presigned address valid ' +
          'for five minutes. 409 until the export is completed.',
        params: IdParams,
        response: {
          200: { description: 'The CSV file', content: { 'text/csv': { schema: Type.String() } } },
          302: { description: 'The file at the storage: follow Location (without your credentials)', type: 'null' },
          ...errorResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const file = await csv.exportFile(request.params.id, readable(request))
      if ('redirect' in file) return reply.redirect(file.redirect, 302)
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .header('cache-control', 'private, no-store')
        .send(file.stream as never)
    },
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteExport',
        tags: ['exports'],
        summary: 'Delete an export and its file',
        params: IdParams,
        response: { 204: deleted, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await csv.deleteExport(request.params.id, readable(request))
      return reply.code(204).send(null)
    },
  )
}

export const importRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const csv = createCsvService(app.db, config.storage, config.publicUrl)
  const writable = (request: FastifyRequest) => allowed(request, IMPORT_RESOURCES, 'write')

  // The one route that takes a CSV file: as the whole body, or as multipart/form-data.
  await app.register(async (plugin) => {
    const files = plugin.withTypeProvider<TypeBoxTypeProvider>()
    await files.register(multipart, { limits: { fileSize: config.importMaxBytes, files: 1, fields: 0, parts: 1 } })
    files.addContentTypeParser(CSV_TYPES, (_request, payload, done) => done(null, payload))
    files.post(
      '/',
      {
        bodyLimit: config.importMaxBytes,
        schema: {
          operationId: 'createImport',
          tags: ['imports'],
          summary: 'Import products or customers from a CSV file, in the background',
          description:
            'The file is the whole body (text/csv) or the field `file` of a multipart/form-data body, at most IMPORT_MAX_BYTES. ' +
            'Answers at once with the import `pending`; the worker checks every row and, unless `dry_run`, applies them in batches ' +
            '(each in a transaction; a stopped import carries on from its last batch). GET /imports/{id}/rows says what each row did ' +
            'and why a refused one was refused. The columns are those of an export (docs/csv.md).',
          querystring: CreateImportQuery,
          'x-multipart-body': ImportFileForm,
          'x-raw-body': { contentTypes: CSV_TYPES, description: 'The CSV file' },
          response: { 202: Import, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const { resource, dry_run: dryRun = false } = request.query
        requireScope(request, resource, 'write')
        let file: Readable
        let fileName: string | null = null
        if (request.isMultipart()) {
          const part = await request.file().catch((error: unknown) => {
            throw new ApiError('validation_error', `The multipart body could not be read: ${(error as Error).message}`)
          })
          if (!part || part.fieldname !== 'file') throw invalidField('file', "Field 'file' is required: the CSV file")
          file = part.file
          fileName = part.filename || null
        } else if (request.body instanceof Readable) {
          file = request.body
        } else {
          // No body, or one another content type's parser read (JSON): not a CSV file.
          throw new ApiError('unsupported_media_type', `Send the CSV file as the body (${CSV_TYPES.join(', ')}) or as multipart/form-data`)
        }
        const created = await csv.createImport(file, { resource, dryRun, fileName, maxBytes: config.importMaxBytes, actor: originOf(request).actor })
        return reply.code(202).send(created)
      },
    )
  })

  app.get(
    '/',
    {
      schema: {
        operationId: 'listImports',
        tags: ['imports'],
        summary: 'List imports, newest first',
        description: 'Only imports of resources the caller may write.',
        querystring: PaginationQuery,
        response: { 200: ImportList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => csv.listImports(writable(request), request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getImport',
        tags: ['imports'],
        summary: 'An import: its status and how many rows were created, updated and refused',
        params: IdParams,
        response: { 200: Import, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => csv.getImport(request.params.id, writable(request)),
  )

  app.get(
    '/:id/rows',
    {
      schema: {
        operationId: 'listImportRows',
        tags: ['imports'],
        summary: "An import's report by row number: what each row did (or would do, in a dry run), and why a refused row was refused",
        params: IdParams,
        querystring: ImportRowsQuery,
        response: { 200: ImportRowList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => csv.listImportRows(request.params.id, writable(request), request.query),
  )

  app.post(
    '/:id/apply',
    {
      schema: {
        operationId: 'applyImport',
        tags: ['imports'],
        summary: 'Apply a validated dry run: the same file, checked again as it is written',
        description: '409 unless the import is a dry run whose status is `validated`.',
        params: IdParams,
        response: { 202: Import, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await csv.applyImport(request.params.id, writable(request))),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteImport',
        tags: ['imports'],
        summary: 'Delete an import, its report and its file',
        description: 'An import under way stops at its next batch; what it applied stays.',
        params: IdParams,
        response: { 204: deleted, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await csv.deleteImport(request.params.id, writable(request))
      return reply.code(204).send(null)
    },
  )
}
