// Jest setup provided by Grafana scaffolding
import './.config/jest-setup';

// jsdom has no IntersectionObserver; @grafana/ui's select menus use one.
class IntersectionObserverStub {
  observe() {}
  unobserve() {}
  disconnect() {}
  takeRecords() {
    return [];
  }
}
Object.defineProperty(global, 'IntersectionObserver', { writable: true, value: IntersectionObserverStub });
