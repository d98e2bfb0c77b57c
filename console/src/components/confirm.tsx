import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

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
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : ''} disabled={props.disabled || busy} onClick={() => dialog.current?.showModal()}>
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
