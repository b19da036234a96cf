/** `TidemarkProvider`: one client for the components below it. */
import { createContext, createElement, useContext, useEffect, useMemo, type ReactNode } from "react";
import { createClient, InvalidArgumentError, type Client, type ClientOptions } from "@tidemark/client";
import { ClientSource } from "./client-source.js";

const SourceContext = createContext<ClientSource | null>(null);

/** Props of {@link TidemarkProvider}: a client the app made, or the options to make one. */
export type TidemarkProviderProps = { children?: ReactNode } & (
  | {
      /** A client from `createClient()`. The app owns it: the provider never closes it. */
      client: Client;
      options?: undefined;
    }
  | {
      /**
       * Options of `createClient()`. The provider makes the client in the browser on first use
       * (never in a server render) and closes it when it unmounts. Read once, like a `useState`
       * initial value.
       */
      options: ClientOptions;
      client?: undefined;
    }
);

/**
 * Gives the hooks below it one Tidemark client (one per tab; the tabs of a profile share its
 * connection).
 *
 * @example
 * <TidemarkProvider options={{ url: "/ws", getToken }}>
 *   <Inbox />
 * </TidemarkProvider>
 */
export function TidemarkProvider(props: TidemarkProviderProps): ReactNode {
  const { client, options } = props;
  if (!client && !options) throw new InvalidArgumentError("TidemarkProvider: pass `client` or `options`");
  // A new source only for a new client object; `options` is read once.
  const source = useMemo(() => (client ? ClientSource.given(client) : ClientSource.create(options!, createClient)), [client]);
  // Holds the client for as long as the provider is mounted, so that a feed swapped for another
  // (a tenant switch) does not close and reopen the connection.
  useEffect(() => {
    source.acquire();
    return () => source.release();
  }, [source]);
  return createElement(SourceContext.Provider, { value: source }, props.children);
}

/** @internal */
export function useSource(hook: string): ClientSource {
  const source = useContext(SourceContext);
  if (!source) throw new TypeError(`${hook}() must be called inside <TidemarkProvider>`);
  return source;
}
