import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * Where the focus goes when a confirmed action removed the button that held it (a revoked token's
 * Revoke, a cancelled job's Cancel): the heading of the section the button was in, else of the page,
 * so a keyboard or screen reader user goes on from the same place instead of from the top of the
 * document, where the browser drops a focus whose element is gone.
 */
function refocus(scope: Element | null): void {
  if (!scope?.isConnected) return;
  const active = document.activeElement;
  // The focus already went somewhere on purpose (a new page's field, say): leave it there.
  if (active && active !== document.body) return;
  const target = scope.querySelector<HTMLElement>('h1, h2, h3') ?? (scope as HTMLElement);
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
  target.focus();
}

/**
 * A button that asks first, in a native modal dialog (focus trapped and Escape handled by the
 * browser): Cancel job, Delete job, Revoke token.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  danger?: boolean;
  disabled?: boolean;
  children?: ComponentChildren;
}) {
  const button = useRef<HTMLButtonElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const close = () => dialog.current?.close();
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      close();
    }
  };
  // A layout effect: its cleanup runs as the component unmounts, while its elements are still in
  // the document (a passive effect's would run after paint, the elements gone).
  useLayoutEffect(
    () => () => {
      // Unmounting while the person is on this control (its dialog open, or the focus back on
      // its button): move the focus before the browser drops it.
      const b = button.current;
      const d = dialog.current;
      const active = document.activeElement;
      if (!b || !d || !(d.open || b === active || d.contains(active))) return;
      const scope = b.closest('section') ?? b.closest('main');
      requestAnimationFrame(() => refocus(scope));
    },
    [],
  );
  return (
    <>
      {/* Not disabled while busy: the modal dialog covers it then, and closing the dialog gives
          it the focus back, which a disabled button cannot take (the focus would drop to the page). */}
      <button ref={button} type="button" class={props.danger ? 'danger' : ''} disabled={props.disabled} onClick={() => dialog.current?.showModal()}>
        {props.children ?? props.label}
      </button>
      <dialog ref={dialog} aria-label={props.label}>
        <p>{props.question}</p>
        <div class="actions">
          <button type="button" onClick={close} disabled={busy}>
            Keep it
          </button>
          <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={confirm} disabled={busy}>
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
