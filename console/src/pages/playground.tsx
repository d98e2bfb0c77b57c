import { PageTitle } from '../components/ui.js';

export function Playground(props: { query: URLSearchParams }) {
  void props;
  return <PageTitle>Playground</PageTitle>;
}
