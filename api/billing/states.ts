// The subscription state machine, Stripe's status names, and the one table every change goes through: a status and
// the move asked of it give the next status, or nothing (409 BILLING_STATE_TRANSITION_INVALID). Moves that change no
// status (a plan change, a payment while active) are rows too, so "may this happen now" has one answer.

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'unpaid', 'canceled', 'paused'] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]

export const SUBSCRIPTION_MOVES = [
  'change_plan', // PATCH planId
  'schedule_cancel', // PATCH cancelAtPeriodEnd: true
  'unschedule_cancel', // PATCH cancelAtPeriodEnd: false
  'pause', // PATCH status: paused
  'resume', // PATCH status: active, from paused
  'paid', // payment event
  'payment_failed', // payment event
  'grace_elapsed', // the grace timer, BILLING_GRACE_HOURS after the first failed payment
  'period_end_cancel', // the period close of a subscription set to cancel at its end
] as const
export type SubscriptionMove = (typeof SUBSCRIPTION_MOVES)[number]

export const TRANSITIONS: Readonly<Record<SubscriptionStatus, Partial<Record<SubscriptionMove, SubscriptionStatus>>>> = {
  trialing: {
    change_plan: 'trialing',
    schedule_cancel: 'trialing',
    unschedule_cancel: 'trialing',
    pause: 'paused',
    paid: 'active',
    period_end_cancel: 'canceled',
  },
  active: {
    change_plan: 'active',
    schedule_cancel: 'active',
    unschedule_cancel: 'active',
    pause: 'paused',
    paid: 'active',
    payment_failed: 'past_due',
    period_end_cancel: 'canceled',
  },
  // Overdue: the plan stays until the debt is settled; a second failure keeps the grace counted from the first.
  past_due: {
    schedule_cancel: 'past_due',
    unschedule_cancel: 'past_due',
    paid: 'active',
    payment_failed: 'past_due',
    grace_elapsed: 'unpaid',
    period_end_cancel: 'canceled',
  },
  unpaid: { schedule_cancel: 'unpaid', unschedule_cancel: 'unpaid', paid: 'active', payment_failed: 'unpaid', period_end_cancel: 'canceled' },
  paused: { schedule_cancel: 'paused', unschedule_cancel: 'paused', resume: 'active', period_end_cancel: 'canceled' },
  // Final, as Stripe's: no move leaves it, or canceling while unpaid would be a way out of the debt.
  canceled: {},
}

export const nextStatus = (from: SubscriptionStatus, move: SubscriptionMove): SubscriptionStatus | undefined => TRANSITIONS[from][move]

/** The statuses that stop new work (the billing block); canceled only exists once its last period has ended. */
export const BLOCKING_STATUSES: readonly SubscriptionStatus[] = ['unpaid', 'canceled', 'paused']
