import { describe, expect, it } from 'vitest'
import { acceptedLanguages, canonicalLocale, localeChain, MAX_LOCALE_CHAIN } from './locales.js'

describe('canonicalLocale', () => {
  it('puts well-formed tags in canonical case', () => {
    expect(canonicalLocale('fr')).toBe('fr')
    expect(canonicalLocale('fr-ca')).toBe('fr-CA')
    expect(canonicalLocale('ZH-hant-tw')).toBe('zh-Hant-TW')
    expect(canonicalLocale('de-CH-1996')).toBe('de-CH-1996')
  })

  it('refuses what is not a language tag', () => {
    for (const tag of ['', 'f', 'fr_CA', 'fr--CA', 'english!', 'x'.repeat(36), 'und', '123', 'fr CA']) {
      expect(canonicalLocale(tag), tag).toBeUndefined()
    }
  })
})

describe('localeChain', () => {
  it('tries each tag, then its shorter forms, before the next tag', () => {
    expect(localeChain(['fr-CA', 'en-GB', 'fr'])).toEqual(['fr-CA', 'fr', 'en-GB', 'en'])
    expect(localeChain(['zh-Hant-TW'])).toEqual(['zh-Hant-TW', 'zh-Hant', 'zh'])
  })

  it('skips a lone single-letter subtag and stops at its limit', () => {
    expect(localeChain(['en-US-x-twain'])).toEqual(['en-US-x-twain', 'en-US', 'en'])
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((letter) => `${letter}${letter}-CA`)
    expect(localeChain(many)).toHaveLength(MAX_LOCALE_CHAIN)
  })
})

describe('acceptedLanguages', () => {
  it('orders by q-value, then by position', () => {
    expect(acceptedLanguages('en;q=0.5, fr-ca, de;q=0.8, it;q=0.8')).toEqual(['fr-CA', 'de', 'it', 'en'])
  })

  it('leaves out *, q=0 and malformed entries', () => {
    expect(acceptedLanguages('*, fr;q=0, en_US, de;q=2, es;level=1, pt;q=0.3')).toEqual(['pt'])
    expect(acceptedLanguages('')).toEqual([])
  })
})
