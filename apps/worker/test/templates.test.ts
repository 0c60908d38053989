/** The templates: the built-in ones, a shop's override folder, and what stops the worker from starting. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { NOTIFICATION_TEMPLATES } from '@commerce/domain'
import { loadTemplates } from '../src/templates.js'

const folders: string[] = []
function overrides(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'commerce-templates-'))
  folders.push(dir)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const shop = { name: 'Bicycle Barn', url: 'https://bicycles.example.com' }
const account = { user_id: 'u', customer_id: null, email: 'jo@example.com', first_name: 'Jo', previous_email: 'old@example.com', expires_at: '2027-01-02T03:04:05.000Z' }
const order = {
  order_number: '1042',
  currency: 'JPY',
  amount_paid: 4250,
  amount_refunded: 1000,
  items: [{ id: 'a', title: 'Bell', variant_title: null, quantity: 1, unit_price: 4250, line_total: 4250 }],
  coupons: [],
  shipping_method: null,
  shipping_address: null,
  totals: { subtotal: 4250, discount: 0, tax: 0, shipping: 0, total: 4250 },
}
const aReturn = {
  order_number: '1042',
  email: 'jo@example.com',
  status: 'requested',
  currency: 'JPY',
  reason: null,
  decline_reason: null,
  items: [{ line_id: 'a', title: 'Bell', variant_title: 'Brass', sku: 'BELL-B', quantity: 1, total: 4250 }],
  refund: { merchandise: 4250, shipping: 0, restocking_fee: 0, total: 4250 },
  amount_refunded: 0,
  amount_credited: 0,
  exchange: null,
}
const draftOrder = {
  currency: 'EUR',
  email: 'jo@example.com',
  shipping_address: { first_name: 'Jo' },
  lines: [{ title: 'Croissant tin', variant_title: null, quantity: 2, total: 21.6 }],
  totals: { subtotal: 19.98, discount: 1.98, tax: 3.6, shipping: 0, total: 21.6 },
  invoice_url: 'https://bicycles.example.com/invoices/abc',
}
const valuesOf = {
  return: { shop, return: aReturn },
  order: { shop, order, fulfillment: { carrier: 'Post', tracking_number: 'T1', tracking_url: null, items: [{ order_item_id: 'a', quantity: 1 }] }, refund: { amount: 1000, currency: 'JPY', reason: null } },
  account: { shop, account, token: 'tok' },
  draft_order: { shop, draft_order: draftOrder },
}

describe('the built-in templates', () => {
  it('render every template, subject on one line, HTML and text, with the shop’s name', async () => {
    const templates = await loadTemplates()
    for (const template of NOTIFICATION_TEMPLATES) {
      const values = template.startsWith('order_') ? valuesOf.order : template.startsWith('return_') ? valuesOf.return : template.startsWith('draft_order_') ? valuesOf.draft_order : valuesOf.account
      const email = await templates.render(template, values)
      expect(email.subject, template).toMatch(/^\S.*\S$/)
      expect(email.subject, template).not.toContain('\n')
      expect(email.html, template).toMatch(/^<!DOCTYPE html>[\s\S]*Bicycle Barn[\s\S]*<\/html>$/)
      expect(email.html, template).toContain(`<title>${email.subject}</title>`)
      expect(email.text, template).toMatch(/\n--\nBicycle Barn · https:\/\/bicycles\.example\.com\n$/)
      expect(email.text, template).not.toMatch(/\n\n\n/)
    }
    expect((await templates.render('order_refunded', valuesOf.order)).subject).toBe('Refund of ¥1,000 for order 1042')
    expect((await templates.render('password_reset', valuesOf.account)).text).toContain('https://bicycles.example.com/account/reset-password?token=tok\n')
    expect((await templates.render('email_change', valuesOf.account)).text).toContain('from old@example.com to jo@example.com')
    expect((await templates.render('email_verification', valuesOf.account)).text).toContain('until 2027-01-02 03:04 UTC')
    const invoice = await templates.render('draft_order_invoice', valuesOf.draft_order)
    expect(invoice.subject).toBe('Your order from Bicycle Barn: €21.60 to pay')
    expect(invoice.text).toContain('Pay it here: https://bicycles.example.com/invoices/abc\n')
    expect(invoice.html).toContain('href="https://bicycles.example.com/invoices/abc"')
  })
})

describe('the return templates', () => {
  const render = async (template: 'return_requested' | 'return_approved' | 'return_declined' | 'return_received', changes: Record<string, unknown>) =>
    (await loadTemplates()).render(template, { shop, return: { ...aReturn, ...changes } })

  it('name the order and each item with its SKU and amount in the currency’s decimals, and the refund as an estimate until received', async () => {
    const requested = await render('return_requested', { reason: 'Too <loud>' })
    expect(requested.subject).toBe('Return request received for order 1042')
    expect(requested.text).toContain('return these items of order 1042 (your reason: Too <loud>).')
    expect(requested.text).toContain('1 × Bell – Brass (SKU BELL-B): ¥4,250\n\nEstimated refund: ¥4,250\n')
    expect(requested.html).toContain('(your reason: Too &lt;loud&gt;)')
    expect(requested.html).toContain('SKU BELL-B')

    const approved = await render('return_approved', { status: 'approved', currency: 'KWD', items: [{ ...aReturn.items[0], total: 1.5 }], refund: { ...aReturn.refund, total: 1.5 } })
    expect(approved.subject).toBe('Your return for order 1042 is approved')
    expect(approved.text).toContain('1 × Bell – Brass (SKU BELL-B): KWD\u00a01.500\n\nEstimated refund: KWD\u00a01.500\n')
  })

  it('a decline says why when the shop gave a reason, lists the items without amounts', async () => {
    const declined = await render('return_declined', { status: 'declined', decline_reason: 'Past the 30 days' })
    expect(declined.subject).toBe('Your return for order 1042 was declined')
    expect(declined.text).toContain('order 1042.\n\nWhy: Past the 30 days\n\n1 × Bell – Brass (SKU BELL-B)\n\nPlease keep these items')
    expect(declined.html).toContain('<strong>Why:</strong> Past the 30 days')
    expect(declined.html).not.toContain('¥')
    const noReason = await render('return_declined', { status: 'declined' })
    expect(noReason.text).not.toContain('Why:')
    expect(noReason.html).not.toContain('Why:')
  })

  it('a receipt shows what the return refunds — items, shipping, restocking fee — and what went back, or that earlier refunds had given it back', async () => {
    const received = { status: 'received', refund: { merchandise: 4250, shipping: 500, restocking_fee: 425, total: 4325 } }
    const whole = await render('return_received', { ...received, amount_refunded: 4325 })
    expect(whole.subject).toBe('We received your return for order 1042')
    expect(whole.text).toContain('1 × Bell – Brass (SKU BELL-B): ¥4,250\n\nItems: ¥4,250\nShipping: ¥500\nRestocking fee: -¥425\nRefund: ¥4,325\n')
    expect(whole.text).toContain('We have refunded ¥4,325 to the way you paid. A separate email confirms the refund')
    expect(whole.html).toContain('<strong>¥4,325</strong> to the way you paid')

    const partly = await render('return_received', { ...received, amount_refunded: 1000 })
    expect(partly.text).toContain('We have refunded ¥1,000 (what was left after earlier refunds of this order) to the way you paid.')

    const nothing = await render('return_received', { ...received, amount_refunded: 0 })
    expect(nothing.text).toContain('Earlier refunds of this order gave this back already: nothing more was refunded.')
    expect(nothing.text).not.toContain('We have refunded')

    // An exchange: the refund pays for the new items first, the rest goes back.
    const exchanged = await render('return_received', { ...received, amount_credited: 3000, amount_refunded: 1325, exchange: { edit_id: 'e', line_ids: ['l'], total: 3000, difference: -1325 } })
    expect(exchanged.text).toContain('¥3,000 of it pays for the items we are sending you in exchange.\n\nWe have refunded ¥1,325 to the way you paid.')
    expect(exchanged.html).toContain('<strong>¥3,000</strong> of it pays for the items we are sending you in exchange.')
    const allCredited = await render('return_received', { ...received, amount_credited: 4325, amount_refunded: 0, exchange: { edit_id: 'e', line_ids: ['l'], total: 5000, difference: 675 } })
    expect(allCredited.text).toContain('¥4,325 of it pays for the items we are sending you in exchange.')
    expect(allCredited.text).not.toMatch(/We have refunded|Earlier refunds/)

    const noShipping = await render('return_received', { status: 'received', amount_refunded: 4250 })
    expect(noShipping.text).toContain('Items: ¥4,250\nRefund: ¥4,250\n')
    expect(noShipping.text).not.toMatch(/Shipping|Restocking fee|Estimated/)
  })
})

describe('NOTIFICATION_TEMPLATES_DIR', () => {
  it('replaces the built-in file of the same path, and only it, layouts and partials included', async () => {
    const dir = overrides({
      'order_confirmation/subject.liquid': 'Thanks for order #{{ order.order_number }}',
      'layouts/text.liquid': '{% block content %}{% endblock %}\n-- the {{ shop.name }} team',
    })
    const templates = await loadTemplates(dir)
    const email = await templates.render('order_confirmation', valuesOf.order)
    expect(email.subject).toBe('Thanks for order #1042')
    expect(email.text).toMatch(/Total: ¥4,250\n\n-- the Bicycle Barn team\n$/)
    // The HTML part is still the built-in one.
    expect(email.html).toContain('Thank you for your order.')
  })

  it('stops the start naming the file of a template that does not parse, or that uses an unknown filter', async () => {
    await expect(loadTemplates(overrides({ 'welcome/html.liquid': '{% if account.first_name %}Hi' }))).rejects.toThrow(/^notification template welcome\/html\.liquid: /)
    await expect(loadTemplates(overrides({ 'partials/order_summary_text.liquid': '{{ order.total | moneys }}' }))).rejects.toThrow(
      /^notification template partials\/order_summary_text\.liquid: .*moneys/,
    )
    await expect(loadTemplates('/nonexistent/templates')).rejects.toThrow('NOTIFICATION_TEMPLATES_DIR /nonexistent/templates does not exist')
  })

  it('escapes the data in HTML unless a template says `| raw`, and runs no code', async () => {
    const dir = overrides({ 'welcome/html.liquid': '<p>{{ account.first_name }} {{ account.first_name | raw }} {{ account.constructor }}</p>' })
    const email = await (await loadTemplates(dir)).render('welcome', { shop, account: { ...account, first_name: '<b>Jo</b>' } })
    expect(email.html).toBe('<p>&lt;b&gt;Jo&lt;/b&gt; <b>Jo</b> </p>')
  })
})
