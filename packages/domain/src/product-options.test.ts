import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DomainError } from './errors.js'
import { chooseValues, firstClash, optionCombinations, reconcileOptions, type OptionInput, type OptionRecord, type VariantChoice } from './product-options.js'

function ids() {
  let next = 0
  return () => `id-${++next}`
}

const input = (name: string, values: string[], extra: Partial<OptionInput> = {}): OptionInput => ({ name, values: values.map((value) => ({ value })), ...extra })

function setUp() {
  const newId = ids()
  const { options } = reconcileOptions([], [input('Size', ['S', 'M']), input('Colour', ['Blue', 'Red'])], [], newId)
  const variants: VariantChoice[] = optionCombinations(options).map((choice, i) => ({ id: `v${i}`, valueIds: choice.valueIds, record: choice.record }))
  return { newId, options, variants }
}

function refusal(run: () => unknown): DomainError {
  try {
    run()
  } catch (error) {
    if (error instanceof DomainError) return error
    throw error
  }
  throw new Error('not refused')
}

describe('reconcileOptions', () => {
  it('keeps ids by text, renames by id, and moves the variants with a rename', () => {
    const { newId, options, variants } = setUp()
    const [size, colour] = options as [OptionRecord, OptionRecord]
    const renamed = reconcileOptions(
      options,
      [
        { name: 'Colour', values: [{ value: 'Red' }, { id: colour.values[0]!.id, value: 'Navy' }] },
        { id: size.id, name: 'Taille', values: [{ value: 's' }, { value: 'M' }] },
      ],
      variants,
      newId,
    )
    expect(renamed.options.map((option) => option.id)).toEqual([colour.id, size.id])
    expect(renamed.options[0]!.values.map((value) => [value.id, value.value])).toEqual([[colour.values[1]!.id, 'Red'], [colour.values[0]!.id, 'Navy']])
    expect(renamed.options[1]!.values.map((value) => value.value)).toEqual(['s', 'M'])
    expect(renamed.variants.map((variant) => variant.record)).toEqual([
      { Colour: 'Navy', Taille: 's' },
      { Colour: 'Red', Taille: 's' },
      { Colour: 'Navy', Taille: 'M' },
      { Colour: 'Red', Taille: 'M' },
    ])
  })

  it('refuses to remove a value still chosen, naming the variants', () => {
    const { newId, options, variants } = setUp()
    const error = refusal(() => reconcileOptions(options, [input('Size', ['S']), input('Colour', ['Blue', 'Red'])], variants, newId))
    expect(error.code).toBe('conflict')
    expect(error.message).toContain("'M' of option 'Size' (variants v2, v3)")
  })

  it('refuses to remove an option when two variants would then have the same values', () => {
    const { newId, options, variants } = setUp()
    const error = refusal(() => reconcileOptions(options, [input('Size', ['S', 'M'])], variants, newId))
    expect(error.code).toBe('conflict')
    expect(error.message).toMatch(/Variants v0 and v1 would have the same values \(Size: S\)/)
    // With one variant per size left, the removal goes through.
    const kept = reconcileOptions(options, [input('Size', ['S', 'M'])], [variants[0]!, variants[3]!], newId)
    expect(kept.variants.map((variant) => variant.record)).toEqual([{ Size: 'S' }, { Size: 'M' }])
  })

  it('gives a new option to existing variants only with a default value', () => {
    const { newId, options, variants } = setUp()
    const error = refusal(() => reconcileOptions(options, [...options.map((option) => ({ id: option.id, name: option.name, values: option.values })), input('Fit', ['Slim', 'Wide'])], variants, newId))
    expect(error.code).toBe('validation_error')
    expect(error.details?.[0]?.field).toBe('options[2].default_value')
    const added = reconcileOptions(options, [...options.map((option) => ({ id: option.id, name: option.name, values: option.values })), input('Fit', ['Slim', 'Wide'], { default_value: 'wide' })], variants, newId)
    expect(added.variants.every((variant) => variant.record['Fit'] === 'Wide')).toBe(true)
  })

  it("maps a product's free-form variants onto its first options", () => {
    const legacy: VariantChoice[] = [
      { id: 'a', valueIds: [], record: { size: 'M' } },
      { id: 'b', valueIds: [], record: { Size: 'L', Material: 'wool' } },
    ]
    const { variants } = reconcileOptions([], [input('Size', ['M', 'L'])], legacy, ids())
    expect(variants.map((variant) => variant.record)).toEqual([{ Size: 'M' }, { Size: 'L' }])
  })

  it('names every field at fault', () => {
    const error = refusal(() => reconcileOptions([], [input('Size', ['S', 's']), input('size', ['M']), { id: 'nope', name: 'Fit', values: [{ value: 'x' }] }], [], ids()))
    expect(error.details?.map((detail) => detail.field)).toEqual(['options[0].values[1].value', 'options[1].name', 'options[2].id'])
  })

  it('never leaves a variant without one value of every option, nor two with the same values', () => {
    const edit = fc.record({
      names: fc.uniqueArray(fc.constantFrom('Size', 'Colour', 'Fit', 'Material'), { maxLength: 3 }),
      values: fc.array(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 4 }), { minLength: 4, maxLength: 4 }),
      defaults: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 4, maxLength: 4 }),
      drop: fc.nat(),
    })
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), (edits) => {
        const newId = ids()
        let options: OptionRecord[] = []
        let variants: VariantChoice[] = []
        for (const step of edits) {
          const wanted = step.names.map((name, i) => ({ name, values: step.values[i]!.map((value) => ({ value })), default_value: step.values[i]!.includes(step.defaults[i]!) ? step.defaults[i]! : step.values[i]![0]! }))
          try {
            const result = reconcileOptions(options, wanted, variants, newId)
            options = result.options
            variants = result.variants
          } catch (error) {
            if (!(error instanceof DomainError)) throw error
          }
          // Generating fills the missing combinations; dropping one leaves a gap for the next edit.
          const have = new Set(variants.map((variant) => variant.valueIds.join(',')))
          for (const choice of optionCombinations(options)) {
            if (!have.has(choice.valueIds.join(','))) variants.push({ id: newId(), valueIds: choice.valueIds, record: choice.record })
          }
          if (variants.length > 1) variants.splice(step.drop % variants.length, 1)
          for (const variant of variants) {
            expect(variant.valueIds).toHaveLength(options.length)
            expect(chooseValues(options, variant.record).valueIds).toEqual(variant.valueIds)
          }
          expect(firstClash(variants)).toBeUndefined()
        }
      }),
    )
  })
})

describe('chooseValues', () => {
  it('matches names and values case aside and names what is wrong', () => {
    const { options } = setUp()
    expect(chooseValues(options, { size: 'm', COLOUR: 'blue' }).record).toEqual({ Size: 'M', Colour: 'Blue' })
    const error = refusal(() => chooseValues(options, { Size: 'XL', Fit: 'Slim' }))
    expect(error.details?.map((detail) => detail.field)).toEqual(['options.Fit', 'options.Size', 'options.Colour'])
    expect(error.details?.[1]?.message).toBe("Field 'options.Size': 'XL' is not a value of option 'Size' (S, M)")
  })
})

describe('optionCombinations', () => {
  it('varies the first option slowest and refuses more than 1000', () => {
    const { options } = setUp()
    expect(optionCombinations(options).map((choice) => choice.title)).toEqual(['S / Blue', 'S / Red', 'M / Blue', 'M / Red'])
    const big = reconcileOptions([], ['A', 'B', 'C', 'D'].map((name) => input(name, ['1', '2', '3', '4', '5', '6'])), [], ids()).options
    expect(refusal(() => optionCombinations(big)).message).toContain('1296 combinations')
  })
})
