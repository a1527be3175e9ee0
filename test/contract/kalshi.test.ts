/**
 * The Kalshi adapter passes the shared VenueAdapter conformance suite against a local fake venue
 * serving the recorded payloads (test/venues/kalshi/fake-kalshi.ts): once with credentials (streamed
 * books, orders, balance) and once without (polled books, orders declared unsupported).
 */
import { kalshiHarness } from '../venues/kalshi/harness.js';
import { venueAdapterContract } from './venue-adapter.contract.js';

venueAdapterContract('kalshi (credentials)', () => kalshiHarness({ withCredentials: true }));
venueAdapterContract('kalshi (public data only)', () => kalshiHarness({ withCredentials: false }));
