import { describe, expect, it } from 'vitest'
import { openDatabase } from '../src/embedded.js'

describe('openDatabase', () => {
  it('returns a given url untouched and starts nothing', async () => {
    const url = 'postgres://app:p%40ss%2Fword@db.internal:6543/commerce?sslmode=require&application_name=x'
    const opened = await openDatabase({ url, dataDir: '/nonexistent/never-created', port: 1 })
    expect(opened.url).toBe(url)
    expect(opened.startedHere).toBe(false)
    await expect(opened.stop()).resolves.toBeUndefined()
  })
})
