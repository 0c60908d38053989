/** Form controls with their label, hint and error tied to them (for screen readers as for eyes). */
import { useId, useState, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react'

interface FieldFrame {
  label: string
  hint?: ReactNode
  error?: string | undefined
}

function Frame({ id, label, hint, error, children }: FieldFrame & { id: string; children: ReactNode }) {
  return (
    <div className={error ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  )
}

function describedBy(id: string, { hint, error }: FieldFrame): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
}

export function TextField({ label, hint, error, ...input }: FieldFrame & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId()
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy(id, { label, hint, error })} {...input} />
    </Frame>
  )
}

export function TextAreaField({ label, hint, error, ...textarea }: FieldFrame & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId()
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <textarea id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy(id, { label, hint, error })} {...textarea} />
    </Frame>
  )
}

export function SelectField({
  label,
  hint,
  error,
  options,
  ...select
}: FieldFrame & SelectHTMLAttributes<HTMLSelectElement> & { options: readonly (readonly [value: string, label: string])[] }) {
  const id = useId()
  return (
    <Frame id={id} label={label} hint={hint} error={error}>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy(id, { label, hint, error })} {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </Frame>
  )
}

export function CheckboxField({ label, hint, ...input }: { label: string; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId()
  return (
    <div className="field field-checkbox">
      <input id={id} type="checkbox" aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  )
}

/**
 * An editable list of short texts (a product's tags): one typed is added by Enter, a comma or the
 * Add button, each is removed by its own button. The form receives every item, and what is typed
 * but not yet added, as fields named `name` (read them with FormData.getAll).
 */
export function TextListField({
  label,
  name,
  hint,
  defaultValue = [],
  maxLength,
}: {
  label: string
  name: string
  hint?: ReactNode
  defaultValue?: readonly string[]
  maxLength?: number
}) {
  const id = useId()
  const [items, setItems] = useState<string[]>([...defaultValue])
  const [text, setText] = useState('')
  const add = () => {
    const typed = text.split(',').map((item) => item.trim().replace(/\s+/g, ' ')).filter(Boolean)
    // One per spelling whatever its case, as the API keeps them.
    setItems((current) => typed.reduce((all, item) => (all.some((kept) => kept.toLowerCase() === item.toLowerCase()) ? all : [...all, item]), current))
    setText('')
  }
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {items.length > 0 ? (
        <ul className="chips">
          {items.map((item) => (
            <li key={item} className="chip">
              {item}
              <input type="hidden" name={name} value={item} />
              <button type="button" className="chip-remove" aria-label={`Remove ${item}`} onClick={() => setItems((current) => current.filter((kept) => kept !== item))}>
                ✕
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="chip-entry">
        <input
          id={id}
          name={name}
          value={text}
          maxLength={maxLength}
          autoComplete="off"
          aria-describedby={hint ? `${id}-hint` : undefined}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key !== 'Enter' && event.key !== ',') return
            event.preventDefault()
            add()
          }}
        />
        <button type="button" className="button" disabled={!text.trim()} onClick={add}>
          Add
        </button>
      </div>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  )
}

/** A submit button that says it is working and cannot be pressed twice. */
export function SubmitButton({ pending, children, className }: { pending: boolean; children: ReactNode; className?: string }) {
  return (
    <button type="submit" className={className ?? 'button button-primary'} disabled={pending} aria-busy={pending || undefined}>
      {pending ? 'Working…' : children}
    </button>
  )
}

/** The named fields of a submitted form, as text. */
export function formText(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {}
  for (const [name, value] of new FormData(form)) if (typeof value === 'string') values[name] = value
  return values
}

/** Empty text as absent: the API then keeps or omits the field. */
export const orUndefined = (text: string | undefined) => (text?.trim() ? text.trim() : undefined)
/** Empty text as null: the API then clears the field. */
export const orNull = (text: string | undefined) => (text?.trim() ? text.trim() : null)
