/** The tests' WebSocket client of /api/v1/ws, over a real socket. */
import { expect } from 'vitest'
import WebSocket, { type ClientOptions } from 'ws'

export const WS_PATH = '/api/v1/ws'

export interface Message {
  type: string
  [field: string]: unknown
}

/** A connected client that keeps every message it receives, to wait for one or read what came before it. */
export class Client {
  readonly messages: Message[] = []
  readonly closed: Promise<{ code: number; reason: string }>
  private cursor = 0
  private readonly waiters = new Set<() => boolean>()

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Message)
      for (const waiter of this.waiters) waiter()
    })
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  }

  send(message: unknown) {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** The messages since the last call, up to and including the first that matches. */
  until(match: (message: Message) => boolean, timeoutMs = 5000): Promise<Message[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const index = this.messages.findIndex((message, at) => at >= this.cursor && match(message))
        if (index === -1) return false
        const taken = this.messages.slice(this.cursor, index + 1)
        this.cursor = index + 1
        this.waiters.delete(check)
        clearTimeout(timer)
        resolve(taken)
        return true
      }
      const timer = setTimeout(() => {
        this.waiters.delete(check)
        const received = JSON.stringify(this.messages.slice(this.cursor))
        reject(new Error(`no matching message within ${timeoutMs} ms; received ${received.length > 2000 ? `${received.slice(0, 2000)}… (${received.length} characters)` : received}`))
      }, timeoutMs)
      if (!check()) this.waiters.add(check)
    })
  }

  async next(): Promise<Message> {
    const [message] = await this.until(() => true)
    return message!
  }

  /** Waits for the event with this id and returns the events that came since the last wait, in order. */
  async eventsUntil(id: string, timeoutMs?: number): Promise<Message[]> {
    return (await this.until((message) => message.id === id, timeoutMs)).filter((message) => message.type === 'event')
  }

  /** What arrived since the last wait. */
  unread(): Message[] {
    return this.messages.slice(this.cursor)
  }
}

/** Every socket `connect` opened, for a test file to close when it is done. */
export const opened: WebSocket[] = []

/** Opens a WebSocket and waits for `ready`. */
export async function connect(target: string, options: { token?: string; protocols?: string[]; client?: ClientOptions } = {}): Promise<Client> {
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {}
  const socket = new WebSocket(target, options.protocols, { headers, ...options.client })
  opened.push(socket)
  const client = new Client(socket)
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  expect(await client.next()).toEqual({ type: 'ready' })
  return client
}
