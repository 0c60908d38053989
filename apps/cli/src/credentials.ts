/**
 * The token `commerce login` keeps, in the user's config directory (oclif's configDir:
 * $XDG_CONFIG_HOME/commerce or ~/.config/commerce), readable by the user only.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface StoredCredentials {
  base_url: string
  token: string
  /** Who the token belongs to, for messages: an email or "API key". */
  subject: string
}

export const credentialsFile = (configDir: string) => join(configDir, 'credentials.json')

export async function readCredentials(configDir: string): Promise<StoredCredentials | undefined> {
  let text: string
  try {
    text = await readFile(credentialsFile(configDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const value = JSON.parse(text) as Partial<StoredCredentials>
  return typeof value.base_url === 'string' && typeof value.token === 'string'
    ? { base_url: value.base_url, token: value.token, subject: value.subject ?? '' }
    : undefined
}

export async function writeCredentials(configDir: string, credentials: StoredCredentials): Promise<string> {
  await mkdir(configDir, { recursive: true, mode: 0o700 })
  const file = credentialsFile(configDir)
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  return file
}

/** True when there was something to forget. */
export async function forgetCredentials(configDir: string): Promise<boolean> {
  const existed = (await readCredentials(configDir)) !== undefined
  await rm(credentialsFile(configDir), { force: true })
  return existed
}
