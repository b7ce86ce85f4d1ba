//! What the worker needs of the browser: values across the boundary, a turn of the event
//! loop, and a sleep that a relayed record or a cancel cuts short.

use js_sys::{Function, Promise, Reflect};
use std::cell::RefCell;
use std::collections::VecDeque;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::MessageChannel;

/// A value as a plain JS object (JSON-compatible: maps as objects, no BigInt).
pub fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsValue> {
    serde::Serialize::serialize(v, &serde_wasm_bindgen::Serializer::json_compatible()).map_err(JsValue::from)
}

thread_local! {
    /// One channel for every macrotask turn: its messages run after the messages already
    /// queued (a cancel among them), without `setTimeout`'s 4 ms clamp.
    static TURNS: (MessageChannel, RefCell<VecDeque<Function>>) = {
        let channel = MessageChannel::new().expect("MessageChannel");
        let on_message = Closure::<dyn Fn()>::new(|| {
            if let Some(resolve) = TURNS.with(|t| t.1.borrow_mut().pop_front()) {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        channel.port1().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget(); // lives as long as the worker
        (channel, RefCell::new(VecDeque::new()))
    };
    /// Resolvers of the sleeps in [`woken_or_after`].
    static SLEEPERS: RefCell<Vec<Function>> = const { RefCell::new(Vec::new()) };
}

/// Resolves after one turn of the worker's event loop.
pub async fn next_macrotask() {
    let promise = Promise::new(&mut |resolve, _| {
        TURNS.with(|t| {
            t.1.borrow_mut().push_back(resolve);
            let _ = t.0.port2().post_message(&JsValue::NULL);
        });
    });
    let _ = JsFuture::from(promise).await;
}

/// Resolves at the next [`wake`], or after `ms` milliseconds.
pub async fn woken_or_after(ms: i32) {
    let promise = Promise::new(&mut |resolve, _| {
        SLEEPERS.with(|s| s.borrow_mut().push(resolve.clone()));
        let set_timeout =
            Reflect::get(&js_sys::global(), &"setTimeout".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(f) = set_timeout {
            let _ = f.call2(&JsValue::NULL, &resolve, &ms.into());
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Wake every sleeper of [`woken_or_after`].
pub fn wake() {
    for f in SLEEPERS.with(|s| std::mem::take(&mut *s.borrow_mut())) {
        let _ = f.call0(&JsValue::NULL);
    }
}

/// A property of a JS object, if it is there.
pub fn get(obj: &JsValue, key: &str) -> Option<JsValue> {
    Reflect::get(obj, &key.into()).ok().filter(|v| !v.is_undefined() && !v.is_null())
}
