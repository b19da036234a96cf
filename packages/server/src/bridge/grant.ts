/**
 * What an `authorize` answer grants. `true` grants a subscription to one tenant's events; a
 * subscribe without a tenant reads every tenant's events, so it needs the distinct whole-topic
 * grant: a rule that compares values carelessly (`tenantId === user.id` with no `id`, an
 * allow-all `() => true`) cannot hand out the whole topic by accident.
 */

/** The answer of `authorize` that grants a read of the whole topic (every tenant's events). */
export interface WholeTopicGrant {
  readonly wholeTopic: true;
}

/**
 * Grants a subscribe without a tenant: every tenant's events of the topic. `true` never does.
 * A config file may return the literal `{ wholeTopic: true }` instead.
 *
 * @example
 * authorize: (user, { tenantId }) =>
 *   tenantId === undefined ? (user.role === "auditor" ? WHOLE_TOPIC : false) : user.tenants.includes(tenantId)
 */
export const WHOLE_TOPIC: WholeTopicGrant = Object.freeze({ wholeTopic: true });

/** What `authorize` may answer: `true` (this tenant), {@link WHOLE_TOPIC} (every tenant), or `false`. */
export type AuthorizeResult = boolean | WholeTopicGrant;

/** @internal Whether `result` grants a subscribe to `tenantId` (undefined: the whole topic). */
export function grants(result: unknown, tenantId: string | undefined): boolean {
  const whole = typeof result === "object" && result !== null && (result as { wholeTopic?: unknown }).wholeTopic === true;
  // The whole-topic grant covers each tenant too; `true` covers one tenant, never all of them.
  return whole || (tenantId !== undefined && result === true);
}

/** @internal Why a subscribe was refused, for the `error` frame. */
export function refusal(result: unknown, tenantId: string | undefined): string {
  return tenantId === undefined && result === true
    ? "a subscribe without a tenant reads every tenant's events: authorize must return WHOLE_TOPIC ({ wholeTopic: true }) for it, true grants one tenant"
    : "not allowed to subscribe to this topic and tenant";
}
