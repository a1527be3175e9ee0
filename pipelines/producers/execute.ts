/**
 * Enqueues real-money legs for the execute role (pipelines/processors/execute.ts), one queue per
 * venue. The job id is the leg's router_order_id, so adding a leg again (a resumed buy, the execute
 * role's sweep) while its job waits, runs or is delayed adds nothing; a job ends removed, so a
 * later add of an undecided leg runs it again (and a decided one returns its decision at once).
 * A venue-side cancel goes on the same venue queue (enqueueCancel).
 */
import { Queue } from 'bullmq';
import type { Keyspace } from '../../src/store/redis/client.js';
import { addWithin, executeQueueName, queueOptions, type JobMap } from '../queues.js';

const ENQUEUE_TIMEOUT_MS = 1_000;

/**
 * Retries of a job that failed (a retryable venue error, PostgreSQL or Redis briefly away): each
 * attempt reconciles first (the same client_order_id), so retrying is always safe. A leg still
 * undecided after them is picked up by the execute role's sweep.
 */
export const EXECUTE_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 250 },
  removeOnComplete: true,
  removeOnFail: true,
} as const;

/** The job id of an order's venue-side cancel (a placement's is the router_order_id itself). */
export const cancelJobId = (routerOrderId: string): string => `cancel-${routerOrderId}`;

export class ExecuteProducer {
  private readonly queues = new Map<string, Queue<JobMap['execute']>>();

  constructor(
    private readonly redisUrl: string,
    private readonly ks: Keyspace,
  ) {}

  /** The venue's queue (opened on first use). */
  queue(partnerId: string): Queue<JobMap['execute']> {
    let q = this.queues.get(partnerId);
    if (!q) this.queues.set(partnerId, (q = new Queue<JobMap['execute']>(executeQueueName(partnerId), queueOptions(this.redisUrl, this.ks))));
    return q;
  }

  /** Adds the leg's job unless it has one; rejects (StoreUnavailable) when Redis does not take it in time. */
  async enqueue(partnerId: string, routerOrderId: string): Promise<void> {
    const add = this.queue(partnerId).add('execute', { router_order_id: routerOrderId }, { ...EXECUTE_JOB_OPTIONS, jobId: routerOrderId });
    await addWithin(add, ENQUEUE_TIMEOUT_MS, 'queueing a real-money leg');
  }

  /** Adds the job of the order's venue-side cancel unless it has one (its id: `cancel-<router_order_id>`). */
  async enqueueCancel(partnerId: string, routerOrderId: string): Promise<void> {
    const add = this.queue(partnerId).add('cancel', { router_order_id: routerOrderId, action: 'cancel' }, { ...EXECUTE_JOB_OPTIONS, jobId: cancelJobId(routerOrderId) });
    await addWithin(add, ENQUEUE_TIMEOUT_MS, 'queueing a venue-side cancel');
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
