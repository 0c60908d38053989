/**
 * The OpenAPI document of the app, built without a database (postgres.js connects on the first
 * query, and none is made) and without listening: what scripts/openapi.js commits as
 * openapi.json and scripts/lint-openapi.js lints. The config is fixed, so the document is too.
 */
import { buildApp } from '../app.js'
import { loadConfig } from '../config.js'

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', JWT_SECRET: 'o'.repeat(32), LOG_LEVEL: 'silent' })
  const app = await buildApp(config, { logger: false })
  try {
    await app.ready()
    return app.swagger() as unknown as Record<string, unknown>
  } finally {
    await app.close()
  }
}

/** The text of openapi.json: two-space JSON and a final newline. */
export const documentText = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`
