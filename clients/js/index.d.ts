// Types of @suggestd/client (src/index.js). The wire shapes follow docs/openapi.yaml.

/** `[start, end)` in UTF-16 code units of displayValue (docs/DESIGN.md §3.2). */
export type HighlightRange = [number, number];

export interface Ancestor {
  itemId: string;
  value: string;
  displayValue: string;
}

export interface Suggestion {
  itemId: string;
  value: string;
  displayValue: string;
  /** Display only (never matched), e.g. "Texas, United States": the served locale's own,
   * else the item's; present only when set. */
  description?: string;
  /** Present only when the item has a parent; root first. */
  ancestors?: Ancestor[];
  /** Matched characters; `[]` when the item matched through an alias. */
  highlight?: HighlightRange[];
}

export interface QueryAnswer {
  items: Suggestion[];
  list?: { id: string };
  requestId?: string;
  /** `query_too_short` or `quota_exceeded` on typed 200 answers. */
  code?: string;
  message?: string;
  /** The normalised query the client sent (added by the client). */
  query?: string;
}

export interface Bootstrap {
  list: { id: string };
  activeVersionHash: string | null;
  queryPolicy: {
    minQueryChars: number;
    debounceMs: number;
    typoTolerance?: { enabled: boolean; minCharsOneTypo: number; minCharsTwoTypos: number };
  };
  localePolicy: { defaultLocale: string; supportedLocales: string[] };
}

/**
 * A synonym set of the control plane's GET/PUT /api/v1/lists/{id}/synonyms (DESIGN §3.4):
 * compiled at publish into extra aliases of the items, so suggestions match through them.
 * `equivalent`: 2-20 phrases that stand for one another; `oneWay`: the input stands for
 * each of the 1-20 phrases, never the reverse. Texts are 1-100 code points once normalised.
 */
export type SynonymSet =
  | { type: 'equivalent'; phrases: string[] }
  | { type: 'oneWay'; input: string; phrases: string[] };

/** The body of GET and PUT /api/v1/lists/{id}/synonyms (at most 10,000 sets). */
export interface Synonyms {
  synonyms: SynonymSet[];
}

/** What a token hook may return: the POST /api/v1/token answer passes straight through. */
export type TokenResult = string | { accessToken: string; expiresAt?: number; expiresIn?: number };

export interface ClientOptions {
  /** The runtime origin, e.g. "https://rt.example.com" (no path). */
  runtime: string;
  /** A publishable key. */
  key: string;
  /** A fixed access token (private lists). Prefer getToken, which can refresh. */
  token?: string;
  /** Called for a new access token before the current one is within tokenMarginMs of expiry, and once after a 401 invalid_token. */
  getToken?: () => TokenResult | Promise<TokenResult>;
  locale?: string;
  /** 1-10 items per answer (runtime default 10). */
  limit?: number;
  /** Only suggest descendants (any depth) of this item: an item id, `itm_` + 22 letters or digits. */
  within?: string | null;
  /** Re-bootstrap (and drop the cache on a new activeVersionHash) when the policy is older than this. Default 60000. */
  bootstrapEveryMs?: number;
  /** Refresh the token this long before it expires. Default 300000. */
  tokenMarginMs?: number;
  fetch?: typeof fetch;
}

export class SuggestError extends Error {
  /** The runtime's code (invalid_key, origin_not_allowed, invalid_token, …) or network_error / token_unavailable / http_<status>. */
  code: string;
  status: number;
  requestId: string | null;
}

export class Client {
  constructor(options: ClientOptions);
  readonly runtime: string;
  readonly key: string;
  readonly private: boolean;
  readonly policy: Bootstrap['queryPolicy'];
  bootstrap(force?: boolean): Promise<Bootstrap>;
  refresh(): Promise<Bootstrap>;
  /** `within` overrides the client's option for this call (null: no filter). */
  query(q: string, options?: { signal?: AbortSignal; within?: string | null }): Promise<QueryAnswer>;
  select(answer: QueryAnswer, item: Suggestion, position: number): Promise<boolean>;
}

export function createClient(options: ClientOptions): Client;
export function normalizeQuery(q: string): string;
export function uuid(): string;

export interface AutocompleteOptions {
  client: Client;
  onSelect?: (item: Suggestion, answer: QueryAnswer, position: number) => void;
  onError?: (error: SuggestError) => void;
  ancestorsLabel?: (ancestors: Ancestor[]) => string;
  /** Inject the default stylesheet (themable with --sg-* CSS variables). Default true. */
  injectStyles?: boolean;
  messages?: { empty?: string; count?: (n: number) => string };
  /** Only suggest descendants of this item (an item id), or of the one a function returns at each query (null: no filter). */
  within?: string | null | (() => string | null | undefined);
}

export interface Autocomplete {
  readonly answer: QueryAnswer | null;
  close(): void;
  destroy(): void;
}

export function autocomplete(input: HTMLInputElement, options: AutocompleteOptions): Autocomplete;

export interface Segment {
  text: string;
  mark: boolean;
}
export function ranges(text: string, highlight: unknown): HighlightRange[];
export function segments(text: string, highlight: unknown): Segment[];
export function renderHighlight(el: Element, text: string, highlight: unknown): void;
