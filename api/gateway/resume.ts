/**
 * Resume from an event id (docs/stream.md "Event ids and resume"), as a pure state machine per
 * (connection, channel, contest), so its rule (every event after the id, in order, then live, with
 * no gap and no duplicate) is property-tested apart from sockets and Redis.
 *
 * Why it is needed: the replay reads the contest's log while the gateway's live tail keeps
 * delivering, and the two see the log at different moments. The tail can be behind the read (the
 * replay then holds events the tail has yet to deliver) or ahead of it (events appended after the
 * read). So, while the replay is read, the connection is not attached to live delivery for that
 * contest; the live events it would have got are buffered instead. Once the replay is read to the
 * end, buffered events newer than the last replayed one are sent, and the connection attaches to
 * live delivery as soon as the tail has passed that id (before that, each live event is sent here
 * if it is newer, and dropped if the replay already sent it).
 */
import { compareStreamIds, type LogEvent } from '../../src/store/redis/eventlog.js';
import type { StreamChannel } from '../../src/domain/stream.js';

/**
 * Most live events buffered per replay. Beyond it the buffer is emptied and the replay reads on
 * from the log once more (the log holds every buffered event), so a slow replay costs reads, not
 * unbounded memory.
 */
export const RESUME_BUFFER_MAX = 10_000;

export interface LiveStep {
  /** An event this connection must be sent now, outside live delivery. */
  send: LogEvent | null;
  /** The tail has passed what was replayed: attach the connection to live delivery for the contest. */
  attach: boolean;
}

export interface ReplayEnd {
  /** Buffered live events to send now, in order (after the replay). */
  send: LogEvent[];
  /** The buffer overflowed: read on from `after` before ending. */
  more: boolean;
  attach: boolean;
}

const NOTHING: LiveStep = { send: null, attach: false };

export class ContestReplay {
  /** Live events of the channel seen while the replay is read; null once it was read to the end. */
  private buffer: LogEvent[] | null = [];
  private overflowed = false;
  /**
   * The newest id of the contest's log this connection has been brought up to: the resume id, then
   * the last event replayed or sent. null when nothing could be replayed (resume unavailable): the
   * buffered events then all go out, with no id to compare against.
   */
  private cursor: string | null;
  /** Whether any page was read past the resume id (an unavailable id then means "trimmed meanwhile"). */
  private progressed = false;

  constructor(
    readonly channel: StreamChannel,
    readonly from: string,
    private readonly bufferMax = RESUME_BUFFER_MAX,
  ) {
    this.cursor = from;
  }

  /** True while the replay is being read (live events are buffered). */
  get reading(): boolean {
    return this.buffer !== null;
  }

  /** The id the next page is read after. */
  get after(): string {
    return this.cursor ?? this.from;
  }

  /** Whether some of the log after the resume id was read. */
  get started(): boolean {
    return this.progressed;
  }

  /**
   * A page of the contest's log read after `after` (every channel, in order): returns the events of
   * this channel to send now.
   */
  page(events: readonly LogEvent[]): LogEvent[] {
    if (events.length === 0) return [];
    this.progressed = true;
    this.cursor = events[events.length - 1]!.id;
    return events.filter((e) => e.channel === this.channel);
  }

  /** A live event of the contest, any channel, after live delivery has handled it. */
  live(ev: LogEvent): LiveStep {
    if (this.buffer) {
      if (ev.channel !== this.channel) return NOTHING;
      if (this.buffer.length >= this.bufferMax) {
        this.buffer = [];
        this.overflowed = true;
      }
      this.buffer.push(ev);
      return NOTHING;
    }
    if (this.cursor === null) return { send: ev.channel === this.channel ? ev : null, attach: true };
    const c = compareStreamIds(ev.id, this.cursor);
    if (c < 0) return NOTHING;
    const send = c > 0 && ev.channel === this.channel ? ev : null;
    if (c > 0) this.cursor = ev.id;
    return { send, attach: true };
  }

  /**
   * The log held nothing more after `after` (a short page). `lastLive` is the newest id of the
   * contest the live tail has delivered (undefined when none since the gateway started).
   */
  end(lastLive: string | undefined): ReplayEnd {
    if (this.overflowed) {
      this.overflowed = false;
      return { send: [], more: true, attach: false };
    }
    const buffered = this.buffer ?? [];
    this.buffer = null;
    const cursor = this.cursor;
    if (cursor === null) return { send: buffered, more: false, attach: true };
    const send = buffered.filter((e) => compareStreamIds(e.id, cursor) > 0);
    const last = send.length ? send[send.length - 1]!.id : cursor;
    this.cursor = last;
    return { send, more: false, attach: lastLive !== undefined && compareStreamIds(lastLive, last) >= 0 };
  }

  /**
   * The log does not hold `after` (never issued, or trimmed while the replay was read): nothing more
   * can be replayed. End with end(); with nothing replayed, every buffered event then goes out.
   */
  unavailable(): void {
    if (!this.progressed) this.cursor = null;
    this.overflowed = false;
  }
}

/**
 * Inserts members (`"k":v,...`, no braces) right after an event's leading `"type":"…"` member (after
 * `{` when there is none): how `seq` and `event_id` reach clients without re-serializing the event.
 */
export function spliceMembers(event: string, members: string): string {
  const lead = '{"type":"';
  if (event.startsWith(lead)) {
    const q = event.indexOf('"', lead.length);
    if (q > 0) {
      const i = q + 1;
      return event[i] === ',' ? `${event.slice(0, i + 1)}${members},${event.slice(i + 1)}` : `${event.slice(0, i)},${members}${event.slice(i)}`;
    }
  }
  const rest = event.slice(1);
  return `{${members}${rest.startsWith('}') ? '' : ','}${rest}`;
}
