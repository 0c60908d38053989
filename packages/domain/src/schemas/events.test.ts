import { describe, expect, it } from 'vitest'
import { EVENT_KINDS } from '../constants.js'
import { DELIVERY_HEADERS, signedDelivery } from '../signature.js'
import { EVENT_CATALOG, WEBHOOK_EVENTS, webhookEventName } from './events.js'

const delivery = signedDelivery(
  {
    id: '0190a6f1-7c3a-7000-8000-00000000beef',
    kind: 'order.paid',
    createdAt: new Date('2026-11-23T00:00:00Z'),
    resourceId: '0190a6f1-7c3a-7000-8000-00000000cafe',
    sequence: 2,
    data: { total: 19.99 },
  },
  ['whsec_dGhpcnR5LXR3byBieXRlcyBvZiBhIHRlc3Qga2V5IQ=='],
  1_800_000_000,
)

describe('the event catalog', () => {
  it('gives every event kind a data schema, a description and a webhook body named after it', () => {
    expect(Object.keys(EVENT_CATALOG).sort()).toEqual([...EVENT_KINDS].sort())
    expect(Object.keys(WEBHOOK_EVENTS).sort()).toEqual([...EVENT_KINDS].sort())
    expect(webhookEventName('order.paid')).toBe('OrderPaidEvent')
    expect(webhookEventName('webhook.disabled')).toBe('WebhookDisabledEvent')
    for (const kind of EVENT_KINDS) {
      expect(WEBHOOK_EVENTS[kind], kind).toMatchObject({ title: webhookEventName(kind) })
      expect(WEBHOOK_EVENTS[kind].properties.event, kind).toMatchObject({ const: kind })
      expect(WEBHOOK_EVENTS[kind].properties.data, kind).toBe(EVENT_CATALOG[kind].data)
      expect(EVENT_CATALOG[kind].description, kind).toMatch(/^[A-Z].*[^.]$/)
    }
  })

  it('describes the body signedDelivery sends, field for field and in its order', () => {
    expect(Object.keys(JSON.parse(delivery.body))).toEqual(Object.keys(WEBHOOK_EVENTS['order.paid'].properties))
    expect(WEBHOOK_EVENTS['order.paid'].required).toEqual(Object.keys(WEBHOOK_EVENTS['order.paid'].properties))
  })

  it('describes every header signedDelivery sends but the content type, and no other', () => {
    expect(Object.keys(DELIVERY_HEADERS).sort()).toEqual(Object.keys(delivery.headers).filter((name) => name !== 'content-type').sort())
  })
})
