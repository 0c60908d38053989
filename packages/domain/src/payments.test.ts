import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { DomainError } from './errors.js'
import {
  PAYMENT_ACTIONS,
  PAYMENT_MOVES,
  PAYMENT_STATES,
  applyProviderPayment,
  cancelPayment,
  capturePayment,
  refundPayment,
  type PaymentFacts,
  type PaymentState,
  type ProviderPayment,
} from './payments.js'

const EXPECTED_MOVES: [PaymentState, PaymentState][] = [
  ['pending', 'requires_action'],
  ['pending', 'authorized'],
  ['pending', 'captured'],
  ['pending', 'failed'],
  ['pending', 'canceled'],
  ['requires_action', 'authorized'],
  ['requires_action', 'captured'],
  ['requires_action', 'failed'],
  ['requires_action', 'canceled'],
  ['authorized', 'captured'],
  ['authorized', 'partially_captured'],
  ['authorized', 'canceled'],
  ['captured', 'partially_refunded'],
  ['captured', 'refunded'],
  ['partially_captured', 'partially_refunded'],
  ['partially_captured', 'refunded'],
  ['partially_refunded', 'partially_refunded'],
  ['partially_refunded', 'refunded'],
  ['failed', 'authorized'],
  ['failed', 'captured'],
  ['failed', 'canceled'],
]

const isMove = (from: PaymentState, to: PaymentState) => PAYMENT_MOVES[from].includes(to)

/** Whether `to` can be reached from `from` in one or more moves (computed here from the table, apart from the code's own). */
function reachableInTable(from: PaymentState, to: PaymentState): boolean {
  const found = new Set<PaymentState>(PAYMENT_MOVES[from])
  for (const state of found) for (const next of PAYMENT_MOVES[state]) found.add(next)
  return found.has(to)
}

const facts = (state: PaymentState, amountMinor: number, capturedMinor = 0, refundedMinor = 0): PaymentFacts => ({
  state,
  amountMinor,
  capturedMinor,
  refundedMinor,
})

const truth = (
  status: ProviderPayment['status'],
  amountMinor: number,
  capturedMinor = 0,
  refundedMinor = 0,
): ProviderPayment => ({
  reference: 'pi_1',
  status,
  amountMinor,
  capturedMinor,
  refundedMinor,
  currency: 'USD',
  nextAction: null,
  failure: status === 'failed' ? { code: 'card_declined', message: 'The card was declined' } : null,
})

/** The error `run` throws (it must throw). */
function errorOf(run: () => unknown): DomainError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError)
    return error as DomainError
  }
  throw new Error('expected a DomainError')
}

/** What a payment's amounts require of it: refunded <= captured <= amount, whole minor units, and a state that agrees. */
function expectConsistent(payment: PaymentFacts) {
  const { state, amountMinor, capturedMinor, refundedMinor } = payment
  for (const value of [amountMinor, capturedMinor, refundedMinor]) expect(Number.isSafeInteger(value) && value >= 0).toBe(true)
  expect(capturedMinor).toBeLessThanOrEqual(amountMinor)
  expect(refundedMinor).toBeLessThanOrEqual(capturedMinor)
  if (state === 'captured') expect([capturedMinor, refundedMinor]).toEqual([amountMinor, 0])
  if (state === 'partially_captured') expect(capturedMinor > 0 && capturedMinor < amountMinor && refundedMinor === 0).toBe(true)
  if (state === 'partially_refunded') expect(refundedMinor > 0 && refundedMinor < capturedMinor).toBe(true)
  if (state === 'refunded') expect(refundedMinor > 0 && refundedMinor === capturedMinor).toBe(true)
  if (['pending', 'requires_action', 'authorized', 'failed', 'canceled'].includes(state)) expect(capturedMinor).toBe(0)
}

describe('the payment state machine', () => {
  test('allows exactly the moves of the design', () => {
    const all = PAYMENT_STATES.flatMap((from) => PAYMENT_MOVES[from].map((to) => [from, to]))
    expect(all).toEqual(
      PAYMENT_STATES.flatMap((from) => EXPECTED_MOVES.filter(([source]) => source === from)),
    )
    expect(all).toHaveLength(EXPECTED_MOVES.length)
  })

  test('refunded and canceled are final; failed moves only on to money held, taken or voided', () => {
    expect(PAYMENT_MOVES.refunded).toEqual([])
    expect(PAYMENT_MOVES.canceled).toEqual([])
    expect(PAYMENT_MOVES.failed).toEqual(['authorized', 'captured', 'canceled'])
  })

  test('every move the service asks for is a move of the table', () => {
    const targets = { capture: ['captured', 'partially_captured'], refund: ['partially_refunded', 'refunded'], cancel: ['canceled'] } as const
    for (const [action, from] of Object.entries(PAYMENT_ACTIONS) as [keyof typeof targets, readonly PaymentState[]][]) {
      for (const state of from) expect(targets[action].some((to) => isMove(state, to))).toBe(true)
    }
  })

  test('every state can be reached from pending', () => {
    for (const state of PAYMENT_STATES) if (state !== 'pending') expect(reachableInTable('pending', state)).toBe(true)
  })
})

describe('capturePayment', () => {
  test('captures all of an authorized payment, or a part (partially_captured)', () => {
    expect(capturePayment(facts('authorized', 1000), 1000)).toEqual(facts('captured', 1000, 1000))
    expect(capturePayment(facts('authorized', 1000), 600)).toEqual(facts('partially_captured', 1000, 600))
    expect(capturePayment(facts('authorized', 1000), 1)).toEqual(facts('partially_captured', 1000, 1))
  })

  test('refuses any other state with invalid_state_transition', () => {
    for (const state of PAYMENT_STATES.filter((state) => state !== 'authorized')) {
      const error = errorOf(() => capturePayment(facts(state, 1000), 1000))
      expect(error.code).toBe('invalid_state_transition')
      expect(error.message).toBe(`A ${state} payment cannot be captured; only a payment that is authorized can be`)
      expect(error.details).toEqual([{ field: 'state', message: 'allowed: authorized' }])
    }
  })

  test('refuses more than authorized, nothing, and amounts that are not whole minor units', () => {
    const over = errorOf(() => capturePayment(facts('authorized', 1000), 1001))
    expect(over.code).toBe('validation_error')
    expect(over.message).toBe('Cannot capture 1001 minor units: 1000 are authorized')
    expect(over.details).toEqual([{ field: 'amount', message: over.message }])
    for (const amount of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      const error = errorOf(() => capturePayment(facts('authorized', 1000), amount))
      expect(error.code).toBe('validation_error')
      expect(error.message).toBe(`The amount to capture must be a positive whole number of minor units, not ${amount}`)
    }
  })
})

describe('refundPayment', () => {
  test('refunds part of what was captured, then the rest', () => {
    const partly = refundPayment(facts('captured', 1000, 1000), 300)
    expect(partly).toEqual(facts('partially_refunded', 1000, 1000, 300))
    expect(refundPayment(partly, 200)).toEqual(facts('partially_refunded', 1000, 1000, 500))
    expect(refundPayment(partly, 700)).toEqual(facts('refunded', 1000, 1000, 1000))
    expect(refundPayment(facts('partially_captured', 1000, 600), 600)).toEqual(facts('refunded', 1000, 600, 600))
  })

  test('refuses a payment with nothing captured, or everything refunded, with invalid_state_transition', () => {
    for (const state of ['pending', 'requires_action', 'authorized', 'failed', 'canceled', 'refunded'] as const) {
      const error = errorOf(() => refundPayment(facts(state, 1000, state === 'refunded' ? 1000 : 0, state === 'refunded' ? 1000 : 0), 1))
      expect(error.code).toBe('invalid_state_transition')
      expect(error.message).toBe(
        `A ${state} payment cannot be refunded; only a payment that is captured, partially_captured or partially_refunded can be`,
      )
    }
  })

  test('refuses more than is left to refund', () => {
    const error = errorOf(() => refundPayment(facts('partially_refunded', 1000, 600, 500), 101))
    expect(error.code).toBe('validation_error')
    expect(error.message).toBe('Cannot refund 101 minor units: 100 of the 600 captured are left to refund')
    expect(errorOf(() => refundPayment(facts('captured', 1000, 1000), 0)).code).toBe('validation_error')
  })
})

describe('cancelPayment', () => {
  test('voids a payment nothing was taken of', () => {
    for (const state of ['pending', 'requires_action', 'authorized', 'failed'] as const) {
      expect(cancelPayment(facts(state, 1000))).toEqual(facts('canceled', 1000))
    }
  })

  test('refuses a payment with money taken, or already canceled', () => {
    for (const state of ['captured', 'partially_captured', 'partially_refunded', 'refunded', 'canceled'] as const) {
      const error = errorOf(() => cancelPayment(facts(state, 1000, state === 'canceled' ? 0 : 1000)))
      expect(error.code).toBe('invalid_state_transition')
      expect(error.message).toBe(
        `A ${state} payment cannot be canceled; only a payment that is pending, requires_action, authorized or failed can be`,
      )
    }
  })
})

describe('applyProviderPayment', () => {
  const pending = facts('pending', 1000)

  test('takes the state the provider reports', () => {
    expect(applyProviderPayment(pending, truth('requires_action', 1000))).toEqual(facts('requires_action', 1000))
    expect(applyProviderPayment(pending, truth('authorized', 1000))).toEqual(facts('authorized', 1000))
    expect(applyProviderPayment(pending, truth('captured', 1000, 1000))).toEqual(facts('captured', 1000, 1000))
    expect(applyProviderPayment(pending, truth('failed', 1000))).toEqual(facts('failed', 1000))
    expect(applyProviderPayment(pending, truth('canceled', 1000))).toEqual(facts('canceled', 1000))
  })

  test('reads a partial capture and refunds from the amounts', () => {
    const authorized = facts('authorized', 1000)
    expect(applyProviderPayment(authorized, truth('captured', 1000, 600))).toEqual(facts('partially_captured', 1000, 600))
    expect(applyProviderPayment(authorized, truth('captured', 1000, 1000, 1))).toEqual(facts('partially_refunded', 1000, 1000, 1))
    expect(applyProviderPayment(authorized, truth('captured', 1000, 600, 600))).toEqual(facts('refunded', 1000, 600, 600))
  })

  test('never moves backwards: a late requires_action after captured changes nothing', () => {
    const captured = facts('captured', 1000, 1000)
    for (const status of ['pending', 'requires_action', 'authorized', 'failed'] as const) {
      expect(applyProviderPayment(captured, truth(status, 1000))).toEqual(captured)
    }
    const refunded = facts('partially_refunded', 1000, 1000, 400)
    expect(applyProviderPayment(refunded, truth('captured', 1000, 1000, 100))).toEqual(refunded)
    expect(applyProviderPayment(facts('canceled', 1000), truth('authorized', 1000))).toEqual(facts('canceled', 1000))
  })

  test('a failed payment the provider later reports authorized or captured follows it; a retry asking for action stays failed', () => {
    const failed = facts('failed', 1000)
    expect(applyProviderPayment(failed, truth('captured', 1000, 1000))).toEqual(facts('captured', 1000, 1000))
    expect(applyProviderPayment(failed, truth('authorized', 1000))).toEqual(facts('authorized', 1000))
    expect(applyProviderPayment(failed, truth('requires_action', 1000))).toEqual(failed)
    expect(applyProviderPayment(facts('authorized', 1000), truth('failed', 1000))).toEqual(facts('authorized', 1000))
  })

  test('refuses an impossible truth with validation_error', () => {
    const messages = [
      [truth('captured', 1000, 500, 600), 'The provider reports payment pi_1 with 600 refunded of 500 captured'],
      [truth('captured', 1000, 1200), 'The provider reports payment pi_1 with 1200 captured of an amount of 1000'],
      [truth('authorized', 1000, 500), 'The provider reports payment pi_1 authorized with 500 captured'],
      [truth('captured', 1000, 0), 'The provider reports payment pi_1 captured with nothing captured'],
      [truth('captured', 1000, -1), "The provider's captured amount of payment pi_1 must be a whole number of minor units, not -1"],
      [truth('pending', 10.5), "The provider's amount of payment pi_1 must be a whole number of minor units, not 10.5"],
    ] as const
    for (const [impossible, message] of messages) {
      const error = errorOf(() => applyProviderPayment(pending, impossible))
      expect(error.code).toBe('validation_error')
      expect(error.message).toBe(message)
    }
  })

  test('refuses a truth that contradicts what was captured', () => {
    const partly = facts('partially_captured', 1000, 600)
    expect(errorOf(() => applyProviderPayment(partly, truth('captured', 1000, 1000))).message).toBe(
      'The provider reports 1000 captured on payment pi_1, captured at 600 before: a payment is captured once',
    )
    expect(errorOf(() => applyProviderPayment(facts('captured', 1000, 1000), truth('authorized', 1500))).message).toBe(
      'The provider reports an amount of 1500 on payment pi_1, captured with an amount of 1000: the amount cannot change after the capture',
    )
    expect(errorOf(() => applyProviderPayment(facts('authorized', 1500), truth('captured', 1000, 1000))).code).toBe('validation_error')
  })

  test('refuses canceled and captured on the same payment with invalid_state_transition', () => {
    const capturedAfterCancel = errorOf(() => applyProviderPayment(facts('canceled', 1000), truth('captured', 1000, 1000)))
    expect(capturedAfterCancel.code).toBe('invalid_state_transition')
    expect(capturedAfterCancel.message).toBe('The provider reports payment pi_1 captured, which a canceled payment cannot become; allowed from canceled: none')
    const canceledAfterCapture = errorOf(() => applyProviderPayment(facts('captured', 1000, 1000), truth('canceled', 1000)))
    expect(canceledAfterCapture.code).toBe('invalid_state_transition')
    expect(canceledAfterCapture.message).toBe(
      'The provider reports payment pi_1 canceled, which a captured payment cannot become; allowed from captured: partially_refunded, refunded',
    )
  })
})

// ---------------------------------------------------------------- properties

const amount = fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(1, 2, 1000))

/**
 * A provider's history of one payment as it happened, each truth cumulative: the customer's
 * attempts (some failing, some asking for action), then an outcome (failed, canceled, held and
 * voided, captured at once, or held and captured in full or in part), then refunds adding up to
 * at most what was captured.
 */
const histories = amount.chain((amountMinor) =>
  fc
    .record({
      attempts: fc.array(fc.constantFrom('requires_action', 'failed') as fc.Arbitrary<'requires_action' | 'failed'>, { maxLength: 4 }),
      outcome: fc.constantFrom('failed', 'canceled', 'voided', 'captured', 'held_then_captured'),
      captureShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
      refundShares: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
    })
    .map(({ attempts, outcome, captureShare, refundShares }) => {
      const history: ProviderPayment[] = [truth('pending', amountMinor), ...attempts.map((status) => truth(status, amountMinor))]
      if (outcome === 'failed') return { amountMinor, history: [...history, truth('failed', amountMinor)] }
      if (outcome === 'canceled') return { amountMinor, history: [...history, truth('canceled', amountMinor)] }
      if (outcome === 'voided') return { amountMinor, history: [...history, truth('authorized', amountMinor), truth('canceled', amountMinor)] }
      if (outcome === 'held_then_captured') history.push(truth('authorized', amountMinor))
      const captured = outcome === 'captured' ? amountMinor : Math.max(1, Math.floor(amountMinor * captureShare))
      history.push(truth('captured', amountMinor, captured))
      // Cumulative refunds: each a share of what is left, the last of them maybe all of it.
      let refunded = 0
      for (const share of refundShares) {
        refunded += Math.ceil((captured - refunded) * share)
        if (refunded > 0) history.push(truth('captured', amountMinor, captured, refunded))
      }
      return { amountMinor, history }
    }),
)

const applyAll = (start: PaymentFacts, truths: readonly ProviderPayment[]) => truths.reduce(applyProviderPayment, start)

/** applyProviderPayment, checking that it keeps the payment consistent and moves it only along the table's moves. */
function applyChecked(current: PaymentFacts, next: ProviderPayment): PaymentFacts {
  const after = applyProviderPayment(current, next)
  expectConsistent(after)
  if (after.state !== current.state) expect(reachableInTable(current.state, after.state)).toBe(true)
  return after
}

describe('applyProviderPayment over generated histories', () => {
  test('applied as they happened, every truth is accepted, every step follows the moves, and the facts end as the last truth says', () => {
    fc.assert(
      fc.property(histories, ({ amountMinor, history }) => {
        const current = history.reduce(applyChecked, facts('pending', amountMinor))
        const last = history.at(-1)!
        expect([current.capturedMinor, current.refundedMinor]).toEqual([last.capturedMinor, last.refundedMinor])
        if (last.status !== 'requires_action') expect(current).toEqual(applyProviderPayment(facts('pending', amountMinor), last))
      }),
    )
  })

  test('applying the same truth twice gives the same facts', () => {
    fc.assert(
      fc.property(histories, ({ amountMinor, history }) => {
        let current = facts('pending', amountMinor)
        for (const next of history) {
          const once = applyProviderPayment(current, next)
          expect(applyProviderPayment(once, next)).toEqual(once)
          current = once
        }
      }),
    )
  })

  test('truths in any order, repeated or not, end in the same facts as in the order they happened', () => {
    const shuffled = histories.chain(({ amountMinor, history }) =>
      fc.record({
        amountMinor: fc.constant(amountMinor),
        history: fc.constant(history),
        // Every truth at least once, some again (a webhook sent twice, a retrieve after it).
        arrival: fc.tuple(
          fc.shuffledSubarray(history, { minLength: history.length }),
          fc.subarray(history),
        ).chain(([all, again]) => fc.shuffledSubarray([...all, ...again], { minLength: all.length + again.length })),
      }),
    )
    fc.assert(
      fc.property(shuffled, ({ amountMinor, history, arrival }) => {
        const start = facts('pending', amountMinor)
        expect(arrival.reduce(applyChecked, start)).toEqual(applyAll(start, history))
      }),
    )
  })
})

type Step =
  | { kind: 'capture'; amountMinor: number }
  | { kind: 'refund'; amountMinor: number }
  | { kind: 'cancel' }
  | { kind: 'truth'; truth: ProviderPayment }

/** Amounts around the limits of a payment of 1000, and some that are never valid. */
const stepAmount = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 400 }), weight: 6 },
  { arbitrary: fc.integer({ min: 1, max: 2000 }), weight: 2 },
  { arbitrary: fc.constantFrom(0, -5, 0.5, 1000, 999, 1001), weight: 2 },
)
const statuses = fc.constantFrom('pending', 'requires_action', 'authorized', 'captured', 'failed', 'canceled') as fc.Arbitrary<ProviderPayment['status']>
/** What a provider could say of a payment of 1000 (now and then grown to 1200 before its capture)... */
const possibleTruths = fc
  .record({
    status: statuses,
    amountMinor: fc.constantFrom(1000, 1000, 1000, 1200),
    capturedShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
    refundedShare: fc.oneof(fc.constant(0), fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  })
  .map(({ status, amountMinor, capturedShare, refundedShare }) => {
    const capturedMinor = status === 'captured' ? Math.max(1, Math.floor(amountMinor * capturedShare)) : 0
    return truth(status, amountMinor, capturedMinor, Math.floor(capturedMinor * refundedShare))
  })
/** ...and what it could not. */
const anyTruths = fc
  .record({
    status: statuses,
    amountMinor: fc.constantFrom(1000, 1200),
    capturedMinor: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1200 }), fc.constantFrom(600, 1000)),
    refundedMinor: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1200 })),
  })
  .map(({ status, amountMinor, capturedMinor, refundedMinor }) => truth(status, amountMinor, capturedMinor, refundedMinor))
const steps: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: stepAmount.map((amountMinor) => ({ kind: 'capture' as const, amountMinor })), weight: 3 },
  { arbitrary: stepAmount.map((amountMinor) => ({ kind: 'refund' as const, amountMinor })), weight: 4 },
  { arbitrary: fc.constant({ kind: 'cancel' as const }), weight: 1 },
  { arbitrary: possibleTruths.map((truth) => ({ kind: 'truth' as const, truth })), weight: 4 },
  { arbitrary: anyTruths.map((truth) => ({ kind: 'truth' as const, truth })), weight: 1 },
)

function take(current: PaymentFacts, step: Step): PaymentFacts {
  if (step.kind === 'capture') return capturePayment(current, step.amountMinor)
  if (step.kind === 'refund') return refundPayment(current, step.amountMinor)
  if (step.kind === 'cancel') return cancelPayment(current)
  return applyProviderPayment(current, step.truth)
}

describe('payments under random sequences of actions and provider truths', () => {
  test('whatever is accepted keeps captured <= amount and refunded <= captured; the service moves one move at a time, the provider along paths of moves', () => {
    fc.assert(
      fc.property(fc.constantFrom<PaymentState>('pending', 'authorized'), fc.array(steps, { maxLength: 30 }), (state, sequence) => {
        let current = facts(state, 1000)
        for (const step of sequence) {
          let after: PaymentFacts
          try {
            after = take(current, step)
          } catch (error) {
            expect(error).toBeInstanceOf(DomainError)
            expect(['invalid_state_transition', 'validation_error']).toContain((error as DomainError).code)
            continue
          }
          expectConsistent(after)
          expect(after.capturedMinor).toBeGreaterThanOrEqual(current.capturedMinor)
          expect(after.refundedMinor).toBeGreaterThanOrEqual(current.refundedMinor)
          if (step.kind === 'truth') {
            expect(applyChecked(current, step.truth)).toEqual(after)
          } else {
            expect(isMove(current.state, after.state)).toBe(true)
            expect(PAYMENT_ACTIONS[step.kind] as readonly PaymentState[]).toContain(current.state)
          }
          current = after
        }
      }),
      { numRuns: 300 },
    )
  })

  test('an action is refused only when its state or amount does not allow it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PAYMENT_STATES),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        stepAmount,
        (state, captured, refundedPart, amountMinor) => {
          const money = ['captured', 'partially_captured', 'partially_refunded', 'refunded'].includes(state)
          const capturedMinor = !money ? 0 : state === 'captured' ? 1000 : Math.min(captured, state === 'partially_captured' ? 999 : 1000)
          const refundedMinor = state === 'refunded' ? capturedMinor : state === 'partially_refunded' ? Math.max(1, Math.min(refundedPart, capturedMinor - 1)) : 0
          if (state === 'partially_refunded' && capturedMinor < 2) return
          const current = facts(state, 1000, capturedMinor, refundedMinor)
          expectConsistent(current)
          const whole = Number.isSafeInteger(amountMinor) && amountMinor > 0
          const accepts = {
            capture: state === 'authorized' && whole && amountMinor <= 1000,
            refund: (PAYMENT_ACTIONS.refund as readonly PaymentState[]).includes(state) && whole && amountMinor <= capturedMinor - refundedMinor,
            cancel: (PAYMENT_ACTIONS.cancel as readonly PaymentState[]).includes(state),
          }
          for (const kind of ['capture', 'refund', 'cancel'] as const) {
            const step = kind === 'cancel' ? { kind } : { kind, amountMinor }
            let accepted = true
            try {
              take(current, step)
            } catch {
              accepted = false
            }
            expect(accepted).toBe(accepts[kind])
          }
        },
      ),
    )
  })

  test('20 partial refunds in any order never refund more than was captured', () => {
    const refunds = fc.record({
      captured: fc.integer({ min: 1, max: 100_000 }),
      amounts: fc.array(fc.integer({ min: 1, max: 20_000 }), { minLength: 20, maxLength: 20 }),
    })
    fc.assert(
      fc.property(refunds.chain(({ captured, amounts }) => fc.tuple(fc.constant(captured), fc.shuffledSubarray(amounts, { minLength: 20 }))), ([captured, amounts]) => {
        let current = facts('captured', captured, captured)
        let accepted = 0
        for (const amountMinor of amounts) {
          const left = current.capturedMinor - current.refundedMinor
          if (amountMinor > left || current.state === 'refunded') {
            expect(() => refundPayment(current, amountMinor)).toThrow(DomainError)
            continue
          }
          current = refundPayment(current, amountMinor)
          accepted += amountMinor
          expectConsistent(current)
        }
        expect(current.refundedMinor).toBe(accepted)
        expect(current.refundedMinor).toBeLessThanOrEqual(captured)
        expect(current.state).toBe(accepted === captured ? 'refunded' : accepted > 0 ? 'partially_refunded' : 'captured')
      }),
    )
  })

  test('20 refunds that add up to what was captured are all accepted in any order and end refunded', () => {
    const split = fc
      .array(fc.integer({ min: 1, max: 5000 }), { minLength: 20, maxLength: 20 })
      .chain((amounts) => fc.shuffledSubarray(amounts, { minLength: 20 }).map((order) => ({ captured: amounts.reduce((sum, value) => sum + value, 0), order })))
    fc.assert(
      fc.property(split, ({ captured, order }) => {
        const end = order.reduce(refundPayment, facts('partially_captured', captured + 1, captured))
        expect(end).toEqual(facts('refunded', captured + 1, captured, captured))
        expect(() => refundPayment(end, 1)).toThrow(DomainError)
      }),
    )
  })
})
