/**
 * A modal dialog on the browser's own <dialog>: showModal() traps focus, Escape closes, and focus
 * returns to the button that opened it. Its content mounts only while it is open.
 */
import { useEffect, useRef, useState, type ReactNode } from 'react'

export function DialogButton({
  label,
  title,
  children,
  className,
}: {
  label: string
  title: string
  className?: string
  children: (close: () => void) => ReactNode
}) {
  const [open, setOpen] = useState(false)
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    if (open) dialog.current?.showModal()
  }, [open])
  const close = () => {
    dialog.current?.close()
    setOpen(false)
  }
  return (
    <>
      <button type="button" className={className ?? 'button'} onClick={() => setOpen(true)}>
        {label}
      </button>
      {open ? (
        <dialog ref={dialog} aria-labelledby="dialog-title" onClose={() => setOpen(false)} className="dialog">
          <header className="dialog-header">
            <h2 id="dialog-title">{title}</h2>
            <button type="button" className="button button-quiet" onClick={close} aria-label="Close">
              ✕
            </button>
          </header>
          {children(close)}
        </dialog>
      ) : null}
    </>
  )
}
