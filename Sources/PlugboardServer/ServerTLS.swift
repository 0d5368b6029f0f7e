import Foundation
import NIOSSL
import PlugboardModel

/// The server's TLS configuration from `serve --tls-cert` and `--tls-key`: files of any name, the certificate chain in
/// PEM and its private key in PEM or DER (read by their content, not by their names). A file that cannot be read or used
/// is named in a sentence about that file.
enum ServerTLS {
    static func configuration(certificate: String, key: String) throws(BoardError) -> TLSConfiguration {
        guard let certificateBytes = FileManager.default.contents(atPath: certificate) else {
            throw BoardError(.io, "cannot read the TLS certificate \(certificate) (--tls-cert); give a readable PEM file")
        }
        let chain = (try? NIOSSLCertificate.fromPEMBytes(Array(certificateBytes))) ?? []
        guard !chain.isEmpty else {
            throw BoardError(
                .invalidInput, "--tls-cert \(certificate) holds no PEM certificate; give the server's certificate chain in PEM")
        }
        guard let keyBytes = FileManager.default.contents(atPath: key) else {
            throw BoardError(.io, "cannot read the TLS private key \(key) (--tls-key); give a readable PEM or DER file")
        }
        guard
            let privateKey = (try? NIOSSLPrivateKey(bytes: Array(keyBytes), format: .pem))
                ?? (try? NIOSSLPrivateKey(bytes: Array(keyBytes), format: .der))
        else {
            throw BoardError(
                .invalidInput,
                "--tls-key \(key) holds no private key that can be read (PEM or DER, not encrypted); give the certificate's private key")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        do { _ = try NIOSSLContext(configuration: configuration) } catch {
            throw BoardError(
                .invalidInput,
                "the private key in --tls-key \(key) cannot be used with the certificate in --tls-cert \(certificate); give the key the certificate was made for"
            )
        }
        return configuration
    }
}
