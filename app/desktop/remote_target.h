#pragma once
// A remote target: an OpenAI-compatible endpoint (vLLM, llama-server, TGI,
// Ollama, another workbench's `serve`) that the Chat and Batch tabs can
// send to instead of the loaded model. The settings file keeps its base
// URL and model id only; its API key lives in the desktop's secret store
// (KeyStore), never in a settings file or the run log.

#include <QList>
#include <QString>
#include <optional>

#include "load/client.h"

class QSettings;

namespace wb::gui {

/// One remote endpoint as the user entered it.
struct RemoteTarget {
    /// "http[s]://host[:port][/path]"; a trailing "/v1" is accepted
    /// (load::check_base_url's rules).
    QString base_url;
    /// The request's "model" field; "" = none sent (the endpoint's default).
    QString model;
    /// A key is stored for base_url in KeyStore (sent as "Authorization:
    /// Bearer"); false = requests go without one.
    bool has_key = false;
    /// "model @ host:port/path" for pickers ("(default model)" when empty).
    QString label() const;
    bool operator==(const RemoteTarget&) const = default;
};

/// `target` as the load client addresses it: its base URL and model, the
/// key `api_key` ("" = none), the route `api` and the whole-request limit
/// `timeout_s` (s). No check of the URL (load::check_base_url does that).
load::Target to_load_target(const RemoteTarget& target, const QString& api_key, load::Api api,
                            double timeout_s);

/// The saved remote targets (group "remote_targets" of `s`: base_url,
/// model and has_key per entry, in order). Entries without a base URL are
/// skipped. Never throws.
QList<RemoteTarget> read_remote_targets(QSettings& s);
/// Replaces the saved list with `targets` (no key is ever written).
void write_remote_targets(QSettings& s, const QList<RemoteTarget>& targets);

/// The secret store's account of an endpoint's key: `base_url` trimmed,
/// without trailing "/" and "/v1" ("http://h:8000/v1/" and "http://h:8000"
/// share a key; "http://localhost:8000" is another account).
QString key_account(const QString& base_url);

/// API keys of remote targets in the desktop's secret store through
/// QtKeychain (Linux: the freedesktop Secret Service of GNOME Keyring or
/// KWallet; macOS: the Keychain; Windows: the Credential Manager), under
/// service `service` with the target's base URL as the account. No
/// insecure fallback: when the store is unavailable the calls fail with
/// its reason and nothing is written anywhere else. Each call blocks in a
/// local event loop until the store answers (the Secret Service answers
/// within D-Bus's 25 s limit).
class KeyStore {
  public:
    explicit KeyStore(QString service = QStringLiteral("inference-workbench"))
        : service_(std::move(service)) {}

    /// Stores `key` for `account`. Returns "" when stored, else the reason
    /// ("the desktop's secret store refused the key: ...").
    QString write(const QString& account, const QString& key) const;
    /// The key stored for `account`; nullopt when there is none or the
    /// store failed, in which case `error` (if given) gets the reason ("" for
    /// "no key stored").
    std::optional<QString> read(const QString& account, QString* error = nullptr) const;
    /// Deletes the key of `account` (no key: success). Returns "" or the reason.
    QString remove(const QString& account) const;

  private:
    QString service_;
};

}  // namespace wb::gui
