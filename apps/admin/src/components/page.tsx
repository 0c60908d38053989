/** A screen's frame: its title (the document's too), actions beside it, and sections. */
import { useEffect, type ReactNode } from 'react'

export function Page({ title, actions, children, back }: { title: string; actions?: ReactNode; children: ReactNode; back?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Commerce admin`
  }, [title])
  return (
    <>
      {back ? <p className="back">{back}</p> : null}
      <header className="page-header">
        <h1 tabIndex={-1} id="page-title">
          {title}
        </h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </>
  )
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <header className="card-header">
        <h2>{title}</h2>
        {actions ? <div className="card-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  )
}
