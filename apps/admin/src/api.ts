/**
 * The one client of the dashboard: every call to the API goes through @commerce/client. The API is
 * the page's own origin unless the build names another (VITE_COMMERCE_API_URL, for a dashboard
 * deployed on its own; that API then lists the dashboard's origin in CORS_ORIGINS).
 */
import { CommerceError, createClient, type Schemas } from '@commerce/client'

export const apiUrl: string = import.meta.env.VITE_COMMERCE_API_URL || window.location.origin

/**
 * `Accept-Language: *`: staff edit the catalog's original text, whatever their browser's language
 * (the browser would otherwise ask for translations, and a save would write them over the originals).
 */
export const client = createClient({ baseUrl: apiUrl, retry: { maxRetries: 1 }, headers: { 'accept-language': '*' } })

export type { Schemas }
export { CommerceError }

/** What a failed call says to a person: the API's message, its field details, and the request id to quote. */
export function describeError(error: unknown): { message: string; details: string[]; requestId?: string } {
  if (error instanceof CommerceError) {
    return {
      message: error.message,
      details: error.details.map((detail) => [detail.field, detail.message].filter(Boolean).join(': ')),
      requestId: error.requestId,
    }
  }
  if (error instanceof TypeError) return { message: 'The API could not be reached. Check your connection and try again.', details: [] }
  return { message: error instanceof Error ? error.message : String(error), details: [] }
}
