/** Sign-in: an admin account's email and password (accounts are made with `commerce users create --role admin`). */
import { useState, type FormEvent } from 'react'
import { ErrorNotice } from '../components/feedback'
import { SubmitButton, TextField } from '../components/forms'
import { useSession } from '../session'

export function SignIn() {
  const { signIn, endedBecause } = useSession()
  const [error, setError] = useState<unknown>()
  const [pending, setPending] = useState(false)

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    setPending(true)
    setError(undefined)
    try {
      await signIn(String(form.get('email')), String(form.get('password')))
    } catch (caught) {
      setError(caught)
      setPending(false)
    }
  }

  return (
    <main className="sign-in" id="main">
      <div className="card">
        <h1>Sign in</h1>
        <p className="muted">Commerce admin, for the shop’s staff.</p>
        {endedBecause && !error ? (
          <p className="notice notice-info" role="status">
            {endedBecause}
          </p>
        ) : null}
        <ErrorNotice error={error} />
        <form className="form" onSubmit={submit}>
          <TextField label="Email" name="email" type="email" autoComplete="username" required autoFocus />
          <TextField label="Password" name="password" type="password" autoComplete="current-password" required />
          <SubmitButton pending={pending}>Sign in</SubmitButton>
        </form>
      </div>
    </main>
  )
}
