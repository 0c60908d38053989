/**
 * A product's options (Size: S, M, L; Colour: Blue, Red) and the values its variants choose
 * (docs/catalog.md, "Options"): how a new list of options is reconciled with the current one and
 * with the variants that chose from it, how a variant's choice is read, and the combinations a
 * generation makes. Free of storage: ids come from the caller.
 */
import { DomainError, type ErrorDetail } from './errors.js'

export interface OptionValueRecord {
  id: string
  value: string
  swatchColor: string | null
  swatchImageUrl: string | null
}

export interface OptionRecord {
  id: string
  name: string
  values: OptionValueRecord[]
}

/** What a write sends for one option (ProductOptionInput). */
export interface OptionInput {
  id?: string | undefined
  name: string
  values: { id?: string | undefined; value: string; swatch_color?: string | null | undefined; swatch_image_url?: string | null | undefined }[]
  default_value?: string | undefined
}

/** A variant as far as its options go. */
export interface VariantChoice {
  id: string
  /** The values it chose (none: a variant of a product without options, whose `options` were free-form). */
  valueIds: readonly string[]
  /** Its option name → value as shown (free-form without options). */
  record: Readonly<Record<string, string>>
  /** What a refusal names it by, beside its id. */
  title?: string
}

/** A variant's choice as stored: value ids sorted (one spelling per combination) and the record in option order. */
export interface Choice {
  valueIds: string[]
  record: Record<string, string>
}

/** Most combinations one product may have (a generation makes at most this many variants). */
export const MAX_COMBINATIONS = 1000

const same = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'accent' }) === 0

/** A 400 naming each field at fault, each message saying which (`Field 'options[0].name' …`). */
function invalid(details: ErrorDetail[]): never {
  const named = details.map(({ field, message }) => ({ field, message: `Field '${field}': ${message}` }))
  throw new DomainError('validation_error', named.map((detail) => detail.message).join('; '), named)
}

/**
 * The options after a write of `input` (the whole list, in order): an option or a value is kept
 * when named by id (renamed when its text differs) or else by the same text (case aside), the
 * others are new (ids from `newId`). Answers the new options, the variants' new choices and which
 * options are new with the value their variants take. Refused: names or values twice, ids the
 * product does not have (400); a removed value still chosen, a removal or an addition that leaves
 * two variants with the same values (409, naming them); a new option on a product with variants
 * and no `default_value` (400).
 */
export function reconcileOptions(
  current: readonly OptionRecord[],
  input: readonly OptionInput[],
  variants: readonly VariantChoice[],
  newId: () => string,
): { options: OptionRecord[]; variants: (VariantChoice & Choice)[] } {
  const details: ErrorDetail[] = []
  const claimed = new Set<string>()
  const defaults = new Map<string, string>()
  const options: OptionRecord[] = input.map((option, i) => {
    const field = `options[${i}]`
    if (input.findIndex((other) => same(other.name, option.name)) !== i) details.push({ field: `${field}.name`, message: `Option '${option.name}' is named twice` })
    let kept: OptionRecord | undefined
    if (option.id !== undefined) {
      kept = current.find((candidate) => candidate.id === option.id)
      if (!kept) details.push({ field: `${field}.id`, message: `The product has no option ${option.id}` })
    } else {
      kept = current.find((candidate) => !claimed.has(candidate.id) && !input.some((other) => other.id === candidate.id) && same(candidate.name, option.name))
    }
    if (kept && claimed.has(kept.id)) details.push({ field: `${field}.id`, message: `Option ${kept.id} is named twice` })
    if (kept) claimed.add(kept.id)
    const claimedValues = new Set<string>()
    const values = option.values.map((value, j): OptionValueRecord => {
      const valueField = `${field}.values[${j}]`
      if (option.values.findIndex((other) => same(other.value, value.value)) !== j) {
        details.push({ field: `${valueField}.value`, message: `Value '${value.value}' of option '${option.name}' is given twice` })
      }
      let keptValue: OptionValueRecord | undefined
      if (value.id !== undefined) {
        keptValue = kept?.values.find((candidate) => candidate.id === value.id)
        if (!keptValue) details.push({ field: `${valueField}.id`, message: `Option '${option.name}' has no value ${value.id}` })
      } else {
        keptValue = kept?.values.find(
          (candidate) => !claimedValues.has(candidate.id) && !option.values.some((other) => other.id === candidate.id) && same(candidate.value, value.value),
        )
      }
      if (keptValue && claimedValues.has(keptValue.id)) details.push({ field: `${valueField}.id`, message: `Value ${keptValue.id} is given twice` })
      if (keptValue) claimedValues.add(keptValue.id)
      return {
        id: keptValue?.id ?? newId(),
        value: value.value,
        swatchColor: value.swatch_color === undefined ? (keptValue?.swatchColor ?? null) : value.swatch_color,
        swatchImageUrl: value.swatch_image_url === undefined ? (keptValue?.swatchImageUrl ?? null) : value.swatch_image_url,
      }
    })
    const id = kept?.id ?? newId()
    if (!kept && option.default_value !== undefined) {
      const chosen = values.find((value) => same(value.value, option.default_value!))
      if (chosen) defaults.set(id, chosen.id)
      else details.push({ field: `${field}.default_value`, message: `'${option.default_value}' is not one of the values of option '${option.name}'` })
    }
    return { id, name: option.name, values }
  })
  if (details.length > 0) invalid(details)
  // No options before or after: the variants' free-form options stay as they are.
  if (options.length === 0 && current.length === 0) return { options, variants: variants.map((variant) => ({ ...variant, valueIds: [], record: { ...variant.record } })) }

  const valueOption = new Map<string, OptionRecord>()
  for (const option of options) for (const value of option.values) valueOption.set(value.id, option)
  const removed = new Map<string, { option: OptionRecord; value: OptionValueRecord }>()
  for (const option of current) {
    const still = options.find((candidate) => candidate.id === option.id)
    if (!still) continue
    for (const value of option.values) if (!valueOption.has(value.id)) removed.set(value.id, { option, value })
  }

  const nameOf = (id: string) => {
    const title = variants.find((variant) => variant.id === id)?.title
    return title ? `'${title}' (${id})` : id
  }
  const missing: ErrorDetail[] = []
  const inUse = new Map<string, string[]>()
  const next = variants.map((variant) => {
    const valueIds = options.map((option, i) => {
      const chosen = variant.valueIds.find((valueId) => valueOption.get(valueId) === option)
      if (chosen) return chosen
      const gone = variant.valueIds.find((valueId) => removed.get(valueId)?.option.id === option.id)
      if (gone) {
        inUse.set(gone, [...(inUse.get(gone) ?? []), variant.id])
        return gone
      }
      // A product's first options: a variant keeps what its free-form options said, where that is one of the values.
      const legacy = variant.valueIds.length === 0 ? Object.entries(variant.record).find(([name]) => same(name, option.name))?.[1] : undefined
      const fromLegacy = legacy === undefined ? undefined : option.values.find((value) => same(value.value, legacy))
      const fallback = fromLegacy?.id ?? defaults.get(option.id)
      if (fallback) return fallback
      missing.push({ field: `options[${i}].default_value`, message: `Variant ${nameOf(variant.id)} has no value of option '${option.name}': give the option a default_value` })
      return ''
    })
    return { id: variant.id, valueIds }
  })
  if (missing.length > 0) invalid(missing.filter((detail, i) => missing.findIndex((other) => other.field === detail.field) === i))
  if (inUse.size > 0) {
    const named = [...inUse].map(([valueId, ids]) => `'${removed.get(valueId)!.value.value}' of option '${removed.get(valueId)!.option.name}' (variants ${ids.map(nameOf).join(', ')})`)
    throw new DomainError('conflict', `Values still chosen by variants cannot be removed: ${named.join('; ')}. Change or delete those variants first`)
  }
  const chosen = next.map((variant) => ({ ...variant, ...choiceOf(options, variant.valueIds) }))
  const clash = firstClash(chosen)
  if (clash) {
    throw new DomainError('conflict', `Variants ${clash.map(nameOf).join(' and ')} would have the same values (${describe(chosen.find((variant) => variant.id === clash[0])!.record)}): delete one of them first`)
  }
  return { options, variants: chosen }
}

/** The sorted value ids and the record (option order) of a choice of values, one per option. */
function choiceOf(options: readonly OptionRecord[], valueIds: readonly string[]): Choice {
  const record: Record<string, string> = {}
  for (const option of options) {
    const value = option.values.find((candidate) => valueIds.includes(candidate.id))
    if (value) record[option.name] = value.value
  }
  return { valueIds: [...valueIds].filter((id) => id !== '').sort(), record }
}

/** The ids of the first two variants with the same values, if any. */
export function firstClash(variants: readonly { id: string; valueIds: readonly string[] }[]): [string, string] | undefined {
  const seen = new Map<string, string>()
  for (const variant of variants) {
    const key = variant.valueIds.join(',')
    const earlier = seen.get(key)
    if (earlier !== undefined) return [earlier, variant.id]
    seen.set(key, variant.id)
  }
  return undefined
}

const describe = (record: Readonly<Record<string, string>>) => Object.entries(record).map(([name, value]) => `${name}: ${value}`).join(', ') || 'none'

/**
 * A variant's choice from what a write sent (`{Size: "M", Colour: "Blue"}`): one value of every
 * option, names and values matched case aside. 400 naming `field.<name>` otherwise.
 */
export function chooseValues(options: readonly OptionRecord[], sent: Readonly<Record<string, string>>, field = 'options'): Choice {
  const details: ErrorDetail[] = []
  const valueIds: string[] = []
  for (const name of Object.keys(sent)) {
    if (!options.some((option) => same(option.name, name))) {
      details.push({ field: `${field}.${name}`, message: `The product has no option '${name}' (its options: ${options.map((option) => option.name).join(', ')})` })
    }
  }
  for (const option of options) {
    const entry = Object.entries(sent).find(([name]) => same(name, option.name))
    const value = entry === undefined ? undefined : option.values.find((candidate) => same(candidate.value, entry[1]))
    if (value) valueIds.push(value.id)
    else {
      const allowed = option.values.map((candidate) => candidate.value).join(', ')
      details.push({
        field: `${field}.${entry?.[0] ?? option.name}`,
        message: entry === undefined ? `Choose a value of option '${option.name}' (${allowed})` : `'${entry[1]}' is not a value of option '${option.name}' (${allowed})`,
      })
    }
  }
  if (details.length > 0) invalid(details)
  return choiceOf(options, valueIds)
}

/** The record (option name → value, in option order) a stored choice shows with these options' texts. */
export function recordOf(options: readonly OptionRecord[], valueIds: readonly string[]): Record<string, string> {
  return choiceOf(options, valueIds).record
}

/**
 * Every combination of the options' values, in the order of the options and their values (the
 * first option's values vary slowest), each with its title ("M / Blue"). 400 past MAX_COMBINATIONS.
 */
export function optionCombinations(options: readonly OptionRecord[]): (Choice & { title: string })[] {
  if (options.length === 0) return []
  const count = options.reduce((product, option) => product * option.values.length, 1)
  if (count > MAX_COMBINATIONS) {
    invalid([{ field: 'options', message: `The options make ${count} combinations, more than the ${MAX_COMBINATIONS} a product may have` }])
  }
  let rows: OptionValueRecord[][] = [[]]
  for (const option of options) rows = rows.flatMap((row) => option.values.map((value) => [...row, value]))
  return rows.map((values) => ({ ...choiceOf(options, values.map((value) => value.id)), title: values.map((value) => value.value).join(' / ') }))
}
