/**
 * The emails' templates: Liquid (LiquidJS), the language of Shopify's own notification templates,
 * chosen because a shop edits these files — Liquid runs no code, only tags and filters, so an
 * override cannot reach the worker's process. Each template is a folder of `templates/` with
 * `subject.liquid`, `html.liquid` and `text.liquid`, sharing `layouts/` and `partials/`. Any file
 * in NOTIFICATION_TEMPLATES_DIR at the same path is used instead (it is looked up there first),
 * so a shop overrides one file without copying the rest. Every template is parsed at start, so a
 * broken override stops the worker with its file and line rather than failing mails later.
 *
 * HTML output is escaped unless `| raw`; amounts go through the `money` filter, which formats them
 * with the currency's exponent (formatMoney of @commerce/domain).
 */
import { existsSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Liquid, type Template } from 'liquidjs'
import { formatMoney, NOTIFICATION_TEMPLATES, type NotificationTemplate } from '@commerce/domain'

/** The templates shipped with the worker. */
export const BUILT_IN_TEMPLATES = fileURLToPath(new URL('../templates', import.meta.url))

/** The parts of an email, each a file of the template's folder. */
const PARTS = ['subject', 'html', 'text'] as const
type Part = (typeof PARTS)[number]

export interface RenderedEmail {
  subject: string
  html: string
  text: string
}

export interface Templates {
  /** The email of `template` for these values (the event's data and what goes with it). */
  render(template: NotificationTemplate, values: Record<string, unknown>): Promise<RenderedEmail>
}

function engine(roots: string[], html: boolean): Liquid {
  const liquid = new Liquid({
    root: roots,
    extname: '.liquid',
    cache: true,
    strictFilters: true,
    ownPropertyOnly: true,
    timezoneOffset: 0,
    // A shop's template cannot keep a job for long or fill its memory.
    renderLimit: 1_000,
    memoryLimit: 1e8,
    ...(html ? { outputEscape: 'escape' as const } : {}),
  })
  liquid.registerFilter('money', (amount: unknown, currency: unknown, locale?: unknown) =>
    formatMoney(Number(amount), String(currency), locale === undefined ? undefined : String(locale)),
  )
  return liquid
}

/** Loads and parses every template (the override folder's files first); throws naming the file that does not parse. */
export async function loadTemplates(overrideDir?: string): Promise<Templates> {
  if (overrideDir !== undefined && !existsSync(overrideDir)) throw new Error(`NOTIFICATION_TEMPLATES_DIR ${overrideDir} does not exist`)
  const roots = overrideDir === undefined ? [BUILT_IN_TEMPLATES] : [overrideDir, BUILT_IN_TEMPLATES]
  const engines: Record<Part, Liquid> = { subject: engine(roots, false), html: engine(roots, true), text: engine(roots, false) }
  const parse = async (file: string, part: Part) => {
    try {
      return await engines[part].parseFile(file)
    } catch (error) {
      throw new Error(`notification template ${file}.liquid: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const parsed = new Map<string, Template[]>()
  for (const template of NOTIFICATION_TEMPLATES) {
    for (const part of PARTS) parsed.set(join(template, part), await parse(join(template, part), part))
  }
  // The layouts and partials too (as the folders resolve them), which the templates only load when rendered.
  for (const folder of ['layouts', 'partials']) {
    for (const file of readdirSync(join(BUILT_IN_TEMPLATES, folder))) await parse(join(folder, basename(file, '.liquid')), 'text')
  }
  const renderPart = async (template: NotificationTemplate, part: Part, values: Record<string, unknown>) =>
    String(await engines[part].render(parsed.get(join(template, part))!, values))
  return {
    async render(template, values) {
      // A subject is one line, whatever the data put in it; the HTML's <title> repeats it.
      const subject = (await renderPart(template, 'subject', values)).replace(/\s+/g, ' ').trim()
      const [html, text] = await Promise.all([renderPart(template, 'html', { ...values, subject }), renderPart(template, 'text', { ...values, subject })])
      return { subject, html: html.trim(), text: `${text.trim().replace(/\n{3,}/g, '\n\n')}\n` }
    },
  }
}
