/** Form controls with their label, hint and error tied to them (for screen readers as for eyes). */
import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react'

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
