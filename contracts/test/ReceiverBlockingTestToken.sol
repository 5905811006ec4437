// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * For tests only: a token of 6 decimals with TestToken's open mint that refuses every transfer to an address on its
 * block list, as USDC refuses one to a blacklisted address. Only receiving is refused, so a sender on the list still
 * pays an up-front token paymaster its prefund in validation, and then the refund postOp sends it back is refused: the
 * postOp revert settlement reports as a prefund kept whole (test/settlement/watcherV07.test.ts). Anyone may put anyone
 * on the list; never deploy it where its tokens could be mistaken for value.
 */
contract ReceiverBlockingTestToken is ERC20 {
    mapping(address => bool) public blockedReceiver;

    constructor() ERC20("Receiver Blocking Test Token", "RBTT") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// Open to anyone: this token is for tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// Open to anyone, as mint is.
    function blockReceiver(address account) external {
        blockedReceiver[account] = true;
    }

    function _beforeTokenTransfer(address, address to, uint256) internal view override {
        require(!blockedReceiver[to], "ReceiverBlockingTestToken: receiver is blocked");
    }
}
