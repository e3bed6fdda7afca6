"""Kubelet device-plugin API v1beta1: api.proto, its generated stubs, and the protocol constants."""
