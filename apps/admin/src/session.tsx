/**
 * Who is signed in. The token lives in sessionStorage: it ends with the tab, and is never shared
 * with another site (the page loads nothing from elsewhere). An answer of 401 anywhere signs out.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { client, CommerceError, type Schemas } from './api'

const TOKEN_KEY = 'commerce-admin-token'

type User = Schemas['User']

interface Session {
  user: User | undefined
  /** Why the last session ended (expired, not an admin), shown on the sign-in page. */
  endedBecause: string | undefined
  signIn(email: string, password: string): Promise<void>
  signOut(reason?: string): void
}

const SessionContext = createContext<Session | undefined>(undefined)

export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User>()
  const [checking, setChecking] = useState(() => sessionStorage.getItem(TOKEN_KEY) !== null)
  const [endedBecause, setEndedBecause] = useState<string>()

  const signOut = useCallback((reason?: string) => {
    sessionStorage.removeItem(TOKEN_KEY)
    client.setAuth(undefined)
    setUser(undefined)
    setEndedBecause(reason)
  }, [])

  // A token kept from earlier in this tab: still valid, and still an admin's?
  useEffect(() => {
    const token = sessionStorage.getItem(TOKEN_KEY)
    if (!token) return
    client.setAuth({ token })
    client
      .getCurrentUser()
      .then((me) => (me.user.role === 'admin' ? setUser(me.user) : signOut('This account is not an admin.')))
      .catch(() => signOut('Your session ended. Sign in again.'))
      .finally(() => setChecking(false))
  }, [signOut])

  const signIn = useCallback(async (email: string, password: string) => {
    const answer = await client.signIn({ email, password })
    if (answer.user.role !== 'admin') {
      client.setAuth(undefined)
      throw new CommerceError({ status: 403, code: 'forbidden', message: 'This account is not an admin: the dashboard is for the shop’s staff.' })
    }
    sessionStorage.setItem(TOKEN_KEY, answer.token)
    setEndedBecause(undefined)
    setUser(answer.user)
  }, [])

  const session = useMemo(() => ({ user, endedBecause, signIn, signOut }), [user, endedBecause, signIn, signOut])
  if (checking) return <p className="loading">Loading…</p>
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
}

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside SessionProvider')
  return session
}

/** Whether an error means the credential is no longer good: the session ends. */
export const endsSession = (error: unknown) => error instanceof CommerceError && error.status === 401
